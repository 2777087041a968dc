package main

import (
	"context"
	"errors"
)

func runAnalyze(ctx context.Context, s *stdio, args []string) error {
	return errors.New("not implemented yet")
}
