package analyze

import (
	"context"
	"encoding/json"
	"os"
	"testing"
)

func TestDump(t *testing.T) {
	p := os.Getenv("DUMP")
	if p == "" {
		t.Skip()
	}
	r, err := AnalyzeFile(context.Background(), p, Options{})
	if err != nil {
		t.Log(err)
	}
	b, _ := json.MarshalIndent(r, "", " ")
	os.Stdout.Write(b)
}
