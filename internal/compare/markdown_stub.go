package compare

import "errors"

// WriteReport is being written.
func WriteReport(c *Comparison, outDir string) ([]string, error) {
	return nil, errors.New("not yet")
}
