package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/memspy/memspy/tracer/valgrind"
)

// TestStopScripts runs the scripts in testdata/stop: how memspy run stops
// after an interrupt, around a fake valgrind (fakevalgrind) whose tool
// directory, $WORK/lib, speaks the current stream version.
func TestStopScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "stop"),
		Setup: func(env *testscript.Env) error {
			lib := filepath.Join(env.WorkDir, "lib")
			if err := os.Mkdir(lib, 0o755); err != nil {
				return err
			}
			tool := fmt.Sprintf("memspy stream version %d\n", valgrind.StreamVersion)
			if err := os.WriteFile(filepath.Join(lib, valgrind.ToolFile), []byte(tool), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(lib, valgrind.PreloadFile), nil, 0o755)
		},
	})
}
