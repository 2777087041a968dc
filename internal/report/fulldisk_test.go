package report

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// On a full disk a plot is not left half-written: SavePlot fails and the
// directory holds no PNG (nor a temporary file). It needs a small tmpfs,
// so it runs as root only, where mounting one works.
func TestSavePlotFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to mount a small tmpfs")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=8k"); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
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
