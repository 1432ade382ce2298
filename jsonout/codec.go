package jsonout

import (
	"cmp"
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// op is how a codec writes its values.
type op uint8

const (
	// opMarshal hands the value to encoding/json and indents what it
	// writes: types with their own marshaller, maps, interfaces, byte
	// slices, json.Number, fields quoted or omitzero, anything unusual.
	// Its output is the Encoder's by construction.
	opMarshal op = iota
	opBool
	opInt
	opUint
	opFloat32
	opFloat64
	opString
	opPointer
	opSlice
	opArray
	opStruct
)

// codec writes the values of one Go type as the indenting Encoder does,
// straight into the indented text: no compact encoding re-scanned, no
// encoding/json reflection per value.
type codec struct {
	op op
	// addrMarshals: the pointer type has a marshaller and the type not,
	// so an addressable value goes through encoding/json by its address
	// (the Encoder calls the pointer's method only then).
	addrMarshals bool
	// elem writes a pointer's, slice's or array's elements.
	elem *codec
	// fields are a struct's members in encoding order.
	fields []field
	// mayFail: a value may fail to encode (see check); height is the
	// most values nested in one, at most maxNesting (settle sets both).
	mayFail bool
	height  int
	// failing are the fields whose values may fail, all check looks at.
	failing []*field
}

// field is one member of a struct as encoding/json lists it.
type field struct {
	// key is the quoted name, colon and space of the indented text.
	key string
	// index leads from the struct to the field through embedded structs
	// (pointers among them followed; a nil one leaves the field out).
	index     []int
	omitEmpty bool
	codec     *codec
}

// codecs compiles the codecs of one Write: per call, not cached in the
// package (no global mutable state); a report's few dozen types take
// microseconds. Once built, it is only read, from any goroutine.
type codecs map[reflect.Type]*codec

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	numberType        = reflect.TypeFor[json.Number]()
)

// of returns t's codec, compiling it and every type it reaches.
func (cs codecs) of(t reflect.Type) *codec {
	if c, ok := cs[t]; ok {
		return c
	}
	c := &codec{}
	cs[t] = c // before the fields: a type may reach itself
	cs.compile(c, t)
	return c
}

// marshals reports whether values of type t encode through their own
// method, which only encoding/json knows how to call.
func marshals(t reflect.Type) bool {
	return t.Implements(marshalerType) || t.Implements(textMarshalerType)
}

// compile fills c for t, following encoding/json's newTypeEncoder.
func (cs codecs) compile(c *codec, t reflect.Type) {
	if marshals(t) {
		c.op = opMarshal
		return
	}
	c.addrMarshals = t.Kind() != reflect.Pointer && marshals(reflect.PointerTo(t))
	switch t.Kind() {
	case reflect.Bool:
		c.op = opBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		c.op = opInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		c.op = opUint
	case reflect.Float32:
		c.op = opFloat32
	case reflect.Float64:
		c.op = opFloat64
	case reflect.String:
		if t != numberType {
			c.op = opString
		}
	case reflect.Pointer:
		c.op, c.elem = opPointer, cs.of(t.Elem())
	case reflect.Slice:
		// Byte slices are base64 (encoding/json's business).
		if t.Elem().Kind() != reflect.Uint8 {
			c.op, c.elem = opSlice, cs.of(t.Elem())
		}
	case reflect.Array:
		c.op, c.elem = opArray, cs.of(t.Elem())
	case reflect.Struct:
		if fields, ok := typeFields(t); ok {
			c.op, c.fields = opStruct, fields
			for i := range c.fields {
				c.fields[i].codec = cs.of(typeByIndex(t, c.fields[i].index))
			}
		}
	}
}

// typeByIndex is the type of the field at index from t.
func typeByIndex(t reflect.Type, index []int) reflect.Type {
	for _, i := range index {
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		t = t.Field(i).Type
	}
	return t
}

// found is a field typeFields finds, before the embedding rules pick.
type found struct {
	field
	name   string
	tagged bool
}

// typeFields lists t's fields as encoding/json's typeFields does
// (breadth first through embedded structs, each type once, then Go's
// embedding rules with tagged names promoted), or false where a field
// needs an option written by encoding/json alone (",string",
// ",omitzero").
func typeFields(t reflect.Type) ([]field, bool) {
	type embedded struct {
		typ   reflect.Type
		index []int
	}
	var current []embedded
	next := []embedded{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	var fields []found
	for len(next) > 0 {
		current, next = next, current[:0]
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, f := range current {
			if visited[f.typ] {
				continue
			}
			visited[f.typ] = true
			for i := range f.typ.NumField() {
				sf := f.typ.Field(i)
				if !listed(sf) {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if hasOption(opts, "omitzero") || hasOption(opts, "string") {
					return nil, false
				}
				if !validTag(name) {
					name = ""
				}
				index := append(slices.Clone(f.index), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					tagged := name != ""
					if name == "" {
						name = sf.Name
					}
					fd := found{field: field{key: `"` + name + `": `, index: index, omitEmpty: hasOption(opts, "omitempty")}, name: name, tagged: tagged}
					fields = append(fields, fd)
					if count[f.typ] > 1 {
						// Twice, so that the rules below drop the name.
						fields = append(fields, fd)
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, embedded{typ: ft, index: index})
				}
			}
		}
	}
	return dominant(fields), true
}

// listed reports whether typeFields looks at sf: exported fields and
// embedded ones of exported or struct type.
func listed(sf reflect.StructField) bool {
	if !sf.Anonymous {
		return sf.IsExported()
	}
	t := sf.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return sf.IsExported() || t.Kind() == reflect.Struct
}

// dominant keeps, per name, the field Go's embedding rules (tags first
// among equals) let through, none where two tie, in index order.
func dominant(fields []found) []field {
	slices.SortFunc(fields, func(a, b found) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return +1
		}
		return slices.Compare(a.index, b.index)
	})
	var out []field
	for i, advance := 0, 0; i < len(fields); i += advance {
		advance = 1
		for i+advance < len(fields) && fields[i+advance].name == fields[i].name {
			advance++
		}
		if advance > 1 && len(fields[i].index) == len(fields[i+1].index) && fields[i].tagged == fields[i+1].tagged {
			continue
		}
		out = append(out, fields[i].field)
	}
	slices.SortFunc(out, func(a, b field) int { return slices.Compare(a.index, b.index) })
	return out
}

// hasOption reports whether the comma-separated opts hold name.
func hasOption(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

// validTag is encoding/json's isValidTag: a tag name of letters, digits
// and punctuation other than quotes and backslashes.
func validTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
