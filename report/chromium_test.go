package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// chromium finds a headless-capable Chromium; CI installs Debian's.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (apt-get install chromium)")
	return ""
}

// screenshot renders page in headless Chromium and returns the PNG path.
// Chromium gets no network, sync or updates, so the page must stand alone.
func screenshot(t *testing.T, browser, page string, height int) string {
	t.Helper()
	dir := t.TempDir()
	htmlPath := filepath.Join(dir, "report.html")
	if err := os.WriteFile(htmlPath, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--screenshot="+shot, "--window-size=1280,"+strconv.Itoa(height), "file://"+htmlPath)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	return shot
}

// TestChromiumRender renders the HTML report of a rich trace and of the
// hostile-names trace and checks the screenshots are real pages: the
// right size, mostly background, with enough ink and colour to be text,
// tables and charts rather than an error page or a blank.
func TestChromiumRender(t *testing.T) {
	if testing.Short() {
		t.Skip("renders in Chromium")
	}
	browser := chromium(t)
	for _, name := range []string{"eggroll_hooks.json.gz", "hostile_names.json"} {
		t.Run(name, func(t *testing.T) {
			var page bytes.Buffer
			if err := HTML(&page, []Input{load(t, name)}, Options{}); err != nil {
				t.Fatal(err)
			}
			shot := screenshot(t, browser, page.String(), 3000)
			f, err := os.Open(shot)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			img, err := png.Decode(f)
			if err != nil {
				t.Fatal(err)
			}
			b := img.Bounds()
			if b.Dx() != 1280 || b.Dy() != 3000 {
				t.Errorf("screenshot is %dx%d", b.Dx(), b.Dy())
			}
			colours := map[[3]uint32]bool{}
			ink := 0
			for y := b.Min.Y; y < b.Max.Y; y += 3 {
				for x := b.Min.X; x < b.Max.X; x += 3 {
					r, g, bl, _ := img.At(x, y).RGBA()
					colours[[3]uint32{r >> 12, g >> 12, bl >> 12}] = true
					if r < 0xc000 || g < 0xc000 || bl < 0xc000 {
						ink++
					}
				}
			}
			total := (b.Dx() / 3) * (b.Dy() / 3)
			if ink < total/100 || ink > total/2 {
				t.Errorf("%d of %d sampled pixels are ink: not a rendered report", ink, total)
			}
			if len(colours) < 20 {
				t.Errorf("only %d colours: charts and tables did not render", len(colours))
			}
		})
	}
}
