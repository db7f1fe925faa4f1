// Package defaults sets the unset fields of a config struct to their
// defaults, for the packages whose zero (or negative) count or duration
// means "the default":
//
//	func (c *Config) withDefaults() Config {
//		var d Config
//		if c != nil {
//			d = *c
//		}
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
