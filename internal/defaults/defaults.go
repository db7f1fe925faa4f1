// Package defaults fills in a config struct's unset fields, for the
// packages whose constructors take the config by pointer (nil means all
// defaults) and whose zero (or negative) count or duration means "the
// default":
//
//	func (c *Config) withDefaults() Config {
//		d := defaults.Copy(c)
//		defaults.Positive(&d.Concurrency, DefaultConcurrency)
//		defaults.Positive(&d.Timeout, DefaultTimeout)
//		d.Name = cmp.Or(d.Name, DefaultName) // where only the zero value is unset
//		return d
//	}
package defaults

// Number is what Positive sets: counts, sizes, durations and ratios.
type Number interface {
	~int | ~int32 | ~int64 | ~float64
}

// Positive sets *v to d unless *v is above zero.
func Positive[T Number](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// Copy returns *c, or T's zero value when c is nil: the config a
// constructor taking c (nil means all defaults) fills in.
func Copy[T any](c *T) T {
	if c == nil {
		var zero T
		return zero
	}
	return *c
}
