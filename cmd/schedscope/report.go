package main

import (
	"context"
	"errors"
)

func runReport(ctx context.Context, s *stdio, args []string) error {
	return errors.New("not implemented yet")
}
