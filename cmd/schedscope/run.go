package main

import (
	"context"
	"errors"
)

func runRun(ctx context.Context, s *stdio, args []string) error {
	return errors.New("not implemented yet")
}
