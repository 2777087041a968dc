package main

import (
	"context"
	"errors"
)

func runFixture(ctx context.Context, s *stdio, args []string) error {
	return errors.New("not implemented yet")
}
