package main

import (
	"context"
	"errors"
)

func runLoad(ctx context.Context, s *stdio, args []string) error {
	return errors.New("not implemented yet")
}
