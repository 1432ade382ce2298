package analyze

import (
	"path/filepath"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestDispatcherShapeHoldsEveryDispatcher: the table asks hookDispatcher
// only of the frames dispatcherShape passes, so it must pass every name
// hookDispatcher accepts (and, to be worth asking, turn away the
// wrappers that merely end like one); moduleName is moduleFrame's test.
func TestDispatcherShapeHoldsEveryDispatcher(t *testing.T) {
	for _, c := range []struct {
		name  string
		shape bool
	}{
		{"torch/nn/modules/module.py(1795): inner", true},
		{"/usr/lib/python3/site-packages/torch/nn/modules/module.py(1762): _call_impl", true},
		{"torch/nn/modules/module.py(): inner", true},
		{"torch/nn/modules/module.py(1751): _wrapped_call_impl", false},
		{"contextlib.py(81): inner", false},
		{"typing.py(392): inner", false},
		{"torch/nn/modules/module.py(17a5): inner", false},
		{"torch/nn/modules/module.py 1795): inner", false},
		{"torch/nn/modules/module.py(1): inner): inner", false},
		{"x(1)torch/nn/modules/module.py(12): inner", true}, // passed on, hookDispatcher says no
		{"(): inner", false},
		{"): inner", false},
		{"inner", false},
		{"_call_impl", false},
		{"", false},
		{"nn.Module: Linear_0", false},
	} {
		f := &trace.PyFrame{Span: trace.Span{Name: c.name}}
		if got := dispatcherShape(c.name); got != c.shape {
			t.Errorf("dispatcherShape(%q) = %v, want %v", c.name, got, c.shape)
		}
		if hookDispatcher(f) && !dispatcherShape(c.name) {
			t.Errorf("%q: a dispatcher that dispatcherShape turns away", c.name)
		}
		if _, want := moduleFrame(c.name); moduleName(c.name) != want {
			t.Errorf("moduleName(%q) = %v, moduleFrame %v", c.name, !want, want)
		}
	}
	for _, n := range []string{"nn.Module: ", "nn.Module: Linear_0", "nn.Module:", "n", "nn.Modules: x"} {
		if _, want := moduleFrame(n); moduleName(n) != want {
			t.Errorf("moduleName(%q) = %v, moduleFrame %v", n, !want, want)
		}
	}
}

// TestCallColumnsMatchCalls: the call columns hold each API call's start,
// end, op and thread, and its kind bits say what IsSyncCall and
// isLaunchCall say of it, on every recorded trace and at 1, 3 and 8
// cores (the columns are read in chunks).
func TestCallColumnsMatchCalls(t *testing.T) {
	names, err := filepath.Glob("../fixtures/recorded/*.json.gz")
	if err != nil || len(names) < 10 {
		t.Fatalf("%d recorded traces (%v)", len(names), err)
	}
	syncs, launches := 0, 0
	for _, path := range names {
		name := "recorded/" + filepath.Base(path)
		tr := load(t, name)
		atCores([]int{1, 3, 8}, func(p int) {
			c := newHostTable(tr).calls
			if len(c.kind) != len(tr.APICalls) {
				t.Fatalf("%s: %d calls in the columns, %d in the trace", name, len(c.kind), len(tr.APICalls))
			}
			for i := range tr.APICalls {
				a := &tr.APICalls[i]
				sync, launch := c.kind[i]&callSync != 0, c.kind[i]&callLaunch != 0
				if c.start[i] != a.Start || c.end[i] != a.End || c.op[i] != a.Op || c.thread[i] != a.Thread ||
					sync != IsSyncCall(a.Name) || launch != isLaunchCall(a) {
					t.Fatalf("%s at %d cores: call %d (%s) columns %d %d %d %d sync %v launch %v", name, p, i, a.Name, c.start[i], c.end[i], c.op[i], c.thread[i], sync, launch)
				}
				if p == 1 && sync {
					syncs++
				}
				if p == 1 && launch {
					launches++
				}
			}
		})
	}
	if syncs == 0 || launches == 0 {
		t.Fatalf("%d syncs, %d launches: the kinds are not tested", syncs, launches)
	}
}
