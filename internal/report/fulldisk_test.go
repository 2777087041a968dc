package report

import (
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/schedscope/schedscope/internal/rundir/rundirtest"
)

// On a full disk a plot is not left half-written: SavePlot fails and the
// directory holds no PNG (nor a temporary file). It needs a small tmpfs,
// so it runs as root only, where mounting one works.
func TestSavePlotFullDisk(t *testing.T) {
	dir := rundirtest.SmallDisk(t, "8k")
	p := plot.New()
	pts := make(plotter.XYs, 200)
	for i := range pts {
		pts[i] = plotter.XY{X: float64(i), Y: float64(i * i % 97)}
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		t.Fatal(err)
	}
	p.Add(line)
	path := filepath.Join(dir, LatencyPlot)
	if err := SavePlot(path, p); err == nil {
		t.Fatal("SavePlot on a full 8 KiB disk succeeded; the plot is smaller than the test needs")
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("after the failed write the directory holds %v (%v), want nothing", entries, err)
	}
}
