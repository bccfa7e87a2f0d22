package wire

import (
	"encoding/binary"
	"fmt"
	"math"
)

// AMF0 type markers.
const (
	amfNumber      = 0x00
	amfBoolean     = 0x01
	amfString      = 0x02
	amfObject      = 0x03
	amfNull        = 0x05
	amfUndefined   = 0x06
	amfECMAArray   = 0x08
	amfObjectEnd   = 0x09
	amfStrictArray = 0x0a
	amfDate        = 0x0b
	amfLongString  = 0x0c
)

// AMF0 decoding limits: nesting depth and values per message.
const (
	maxAMFDepth  = 8
	maxAMFValues = 1024
)

// Property is one name/value pair of an AMF0 object.
type Property struct {
	Name  string
	Value any
}

// Object is an AMF0 object or ECMA array, in wire order.
type Object []Property

// Get returns the value of a property, nil when absent.
func (o Object) Get(name string) any {
	for _, p := range o {
		if p.Name == name {
			return p.Value
		}
	}
	return nil
}

// String returns a string property, "" when absent or not a string.
func (o Object) String(name string) string {
	s, _ := o.Get(name).(string)
	return s
}

// Undefined is the AMF0 undefined value.
type Undefined struct{}

// DecodeAMF0 decodes the AMF0 values of b: float64, bool, string, nil
// (null), Undefined, Object (objects and ECMA arrays), []any (strict
// arrays) and float64 for dates.
func DecodeAMF0(b []byte) ([]any, error) {
	d := amfDecoder{b: b}
	var out []any
	for len(d.b) > 0 {
		v, err := d.value(0)
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

type amfDecoder struct {
	b      []byte
	values int
}

func (d *amfDecoder) take(n int) ([]byte, error) {
	if n < 0 || n > len(d.b) {
		return nil, fmt.Errorf("%w: %d bytes wanted, %d left", ErrAMF, n, len(d.b))
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p, nil
}

func (d *amfDecoder) str(long bool) (string, error) {
	n := 2
	if long {
		n = 4
	}
	p, err := d.take(n)
	if err != nil {
		return "", err
	}
	var l int
	if long {
		l = int(binary.BigEndian.Uint32(p))
	} else {
		l = int(binary.BigEndian.Uint16(p))
	}
	s, err := d.take(l)
	return string(s), err
}

func (d *amfDecoder) value(depth int) (any, error) {
	if depth > maxAMFDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", ErrAMF, maxAMFDepth)
	}
	d.values++
	if d.values > maxAMFValues {
		return nil, fmt.Errorf("%w: more than %d values", ErrAMF, maxAMFValues)
	}
	m, err := d.take(1)
	if err != nil {
		return nil, err
	}
	switch m[0] {
	case amfNumber:
		p, err := d.take(8)
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.BigEndian.Uint64(p)), nil
	case amfBoolean:
		p, err := d.take(1)
		if err != nil {
			return nil, err
		}
		return p[0] != 0, nil
	case amfString:
		return d.str(false)
	case amfLongString:
		return d.str(true)
	case amfNull:
		return nil, nil
	case amfUndefined:
		return Undefined{}, nil
	case amfObject:
		return d.object(depth)
	case amfECMAArray:
		if _, err := d.take(4); err != nil { // approximate count, not trusted
			return nil, err
		}
		return d.object(depth)
	case amfStrictArray:
		p, err := d.take(4)
		if err != nil {
			return nil, err
		}
		n := binary.BigEndian.Uint32(p)
		if int64(n) > int64(len(d.b)) { // each value takes at least one byte
			return nil, fmt.Errorf("%w: array of %d values in %d bytes", ErrAMF, n, len(d.b))
		}
		arr := make([]any, 0, n)
		for i := uint32(0); i < n; i++ {
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		return arr, nil
	case amfDate:
		p, err := d.take(10)
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.BigEndian.Uint64(p)), nil
	}
	return nil, fmt.Errorf("%w: type marker 0x%02x", ErrAMF, m[0])
}

func (d *amfDecoder) object(depth int) (Object, error) {
	var o Object
	for {
		name, err := d.str(false)
		if err != nil {
			return nil, err
		}
		if name == "" && len(d.b) > 0 && d.b[0] == amfObjectEnd {
			d.b = d.b[1:]
			return o, nil
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		o = append(o, Property{Name: name, Value: v})
	}
}

// AppendAMF0 appends the AMF0 encoding of values to b. It takes the types
// DecodeAMF0 returns, plus int, uint32 and map-free Objects; other types
// encode as null.
func AppendAMF0(b []byte, values ...any) []byte {
	for _, v := range values {
		b = appendAMF(b, v)
	}
	return b
}

func appendAMFString(b []byte, s string) []byte {
	if len(s) > 0xffff {
		b = append(b, amfLongString)
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		return append(b, s...)
	}
	b = append(b, amfString)
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func appendAMF(b []byte, v any) []byte {
	switch v := v.(type) {
	case float64:
		b = append(b, amfNumber)
		return binary.BigEndian.AppendUint64(b, math.Float64bits(v))
	case int:
		return appendAMF(b, float64(v))
	case uint32:
		return appendAMF(b, float64(v))
	case bool:
		if v {
			return append(b, amfBoolean, 1)
		}
		return append(b, amfBoolean, 0)
	case string:
		return appendAMFString(b, v)
	case Undefined:
		return append(b, amfUndefined)
	case Object:
		b = append(b, amfObject)
		for _, p := range v {
			b = binary.BigEndian.AppendUint16(b, uint16(len(p.Name)))
			b = append(b, p.Name...)
			b = appendAMF(b, p.Value)
		}
		return append(b, 0, 0, amfObjectEnd)
	case []any:
		b = append(b, amfStrictArray)
		b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
		for _, x := range v {
			b = appendAMF(b, x)
		}
		return b
	}
	return append(b, amfNull)
}
