package analyze

import (
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
