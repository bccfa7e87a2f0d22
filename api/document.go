package api

// Document types of clients (spec 2.1).
const (
	docCPF  = 1
	docCNPJ = 2
)

// digitsOnly returns the decimal digits of s.
func digitsOnly(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b = append(b, s[i])
		}
	}
	return string(b)
}

// allSame reports whether every digit of d is the same (00000000000 and the
// like pass the check-digit test but are not valid documents).
func allSame(d string) bool {
	for i := 1; i < len(d); i++ {
		if d[i] != d[0] {
			return false
		}
	}
	return true
}

// ValidCPF checks the 11 digits and two check digits of a CPF (digits only).
func ValidCPF(d string) bool {
	if len(d) != 11 || digitsOnly(d) != d || allSame(d) {
		return false
	}
	for _, n := range []int{9, 10} {
		sum := 0
		for i := 0; i < n; i++ {
			sum += int(d[i]-'0') * (n + 1 - i)
		}
		check := sum * 10 % 11
		if check == 10 {
			check = 0
		}
		if int(d[n]-'0') != check {
			return false
		}
	}
	return true
}

// ValidCNPJ checks the 14 digits and two check digits of a CNPJ (digits only).
func ValidCNPJ(d string) bool {
	if len(d) != 14 || digitsOnly(d) != d || allSame(d) {
		return false
	}
	weights := []int{6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}
	for _, n := range []int{12, 13} {
		sum := 0
		for i := 0; i < n; i++ {
			sum += int(d[i]-'0') * weights[len(weights)-n+i]
		}
		check := sum % 11
		if check < 2 {
			check = 0
		} else {
			check = 11 - check
		}
		if int(d[n]-'0') != check {
			return false
		}
	}
	return true
}
