package ingest

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// TestFastPathGivesTheGJSONModel reads every real fixture with the fast
// path and with gjson alone: the models must be identical.
func TestFastPathGivesTheGJSONModel(t *testing.T) {
	for _, path := range sampledFixtures(t) {
		raw := gunzip(t, path)
		want, err := Read(bytes.NewReader(raw), path, Options{slow: true, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, opt := range []Options{{}, {Workers: 3, chunk: 4096}} {
			got, err := Read(bytes.NewReader(raw), path, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: the fast path's model differs from gjson's", path)
			}
		}
	}
}

// TestFastPathOddEvents: events the fast path must hand to gjson, or read
// exactly as gjson does: escapes, duplicate keys, odd types and literals,
// number forms, whitespace.
func TestFastPathOddEvents(t *testing.T) {
	events := []string{
		`{"ph":"X","cat":"kernel","name":"a\"b\\c\u00e9","pid":0,"tid":7,"ts":1,"dur":1}`,
		`{"ph":"X","cat":"kernel","name":5,"name":"k","pid":0,"tid":7,"ts":1,"dur":1}`,
		`{"ph":"X","cat":"kernel","name":"k","name":"k2","pid":0,"tid":7,"ts":"1","ts":2,"dur":1}`,
		`{"ph":"X","cat":"kernel","name":"k","pid":"0","tid":"stream 7","ts":1.5e3,"dur":-0}`,
		`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":01,"dur":1}`,
		`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":nul}`,
		`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":truex}`,
		`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1,"args":{"corr\u0065lation":5,"stream":"7","grid":[1,2,3,4],"block":{"x":1}}}`,
		`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1,"args":{"correlation":1e2,"registers per thread":3.7,"shared memory":true,"bytes":null}}`,
		`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1,"args":[1,2]}`,
		`{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":1,"dur":5,"args":{"Input Dims":[[1,2],[]],"Input type":["float","\u0000"],"External id":3,"flops":1e3}}`,
		`{"ph":"X","cat":"python_function","name":"f","pid":1,"tid":1,"ts":1,"dur":5,"args":{"Python parent id":null,"Python id":1,"Python id":2}}`,
		`{"ph":"X","cat":"cat\u0041","name":"x","pid":1,"tid":1,"ts":1,"dur":5}`,
		` { "ph" : "X" , "cat" : "kernel" , "name" : "k" , "pid" : 0 , "tid" : 7 , "ts" : 3 , "dur" : 1 } `,
		`{"ph":"X","cat":"kernel","name":"k","pid":{"a":[1,"]"]},"tid":[7],"ts":4,"dur":1}`,
		`{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"Stream #7\n"}}`,
		`{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":2,"args":{"Device Id":0,"Device Type":1,"Bytes":-4,"Total Allocated":1.5}}`,
		`{"ph":"X","pid":1,"tid":2,"ts":1,"dur":1,"name":"k","args":{"correlation_id":"3","kernel_details":"regs:16 grid:1,2,3\t"}}`,
		// more args members than the fast path keeps, the one it reads last
		`{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":1,"dur":5,"args":{"m0":0,"m1":1,"m2":2,"m3":3,"m4":4,"m5":5,"m6":6,"m7":7,"m8":8,"m9":9,"m10":10,"m11":11,"m12":12,"m13":13,"m14":14,"m15":15,"m16":16,"External id":9}}`,
		// args twice: the last object or array wins, a scalar does not
		`{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":1,"dur":5,"args":{"External id":3},"args":[1]}`,
		`{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":1,"dur":5,"args":{"External id":3},"args":7}`,
		`{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":1,"dur":5,"args":{"External id":3},"args":{"External id":"4\u0035"}}`,
		`{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":1,"dur":5,"args":{"External id":3},"args":{"External id":4,}}`,
		`{"ph":"X","cat":"python_function","name":"f","pid":1,"tid":1,"ts":1,"dur":5,"args":{"Python id":-12,"Python parent id":+3}}`,
		`{"ph":"X","cat":"python_function","name":"f","pid":1,"tid":1,"ts":1,"dur":5,"args":{"Python id":1234567890123456789,"Python parent id":12345678901234567890}}`,
		`{}`, `{ }`, `{"ph":"X",}`,
	}
	for _, ev := range events {
		in := "[" + ev + "]"
		want, werr := Read(strings.NewReader(in), "odd", Options{slow: true})
		got, gerr := Read(strings.NewReader(in), "odd", Options{})
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n fast %+v %v\n slow %+v %v", ev, got, gerr, want, werr)
		}
	}
}
