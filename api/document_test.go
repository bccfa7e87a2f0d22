package api

import "testing"

func TestDocuments(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		cpf  bool
		cnpj bool
	}{
		{"valid cpf", "52998224725", true, false},
		{"valid cpf 2", "11144477735", true, false},
		{"cpf bad check", "52998224724", false, false},
		{"cpf all same", "11111111111", false, false},
		{"valid cnpj", "11222333000181", false, true},
		{"valid cnpj 2", "04252011000110", false, true},
		{"cnpj bad check", "11222333000182", false, false},
		{"cnpj all same", "00000000000000", false, false},
		{"short", "123", false, false},
		{"formatted is not digits", "529.982.247-25", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ValidCPF(tc.doc); got != tc.cpf {
				t.Errorf("ValidCPF(%q) = %v", tc.doc, got)
			}
			if got := ValidCNPJ(tc.doc); got != tc.cnpj {
				t.Errorf("ValidCNPJ(%q) = %v", tc.doc, got)
			}
		})
	}
	if digitsOnly("529.982.247-25") != "52998224725" {
		t.Fatal("digitsOnly")
	}
}
