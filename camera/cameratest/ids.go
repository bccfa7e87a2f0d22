// Package cameratest holds the edge cases of the camera id rule
// (camera.ValidID). Every package that takes camera ids (NATS subjects and
// keys, storage keys, the configuration, the API's input) tests itself
// against them, so no package accepts an id the rule refuses, or refuses
// one it accepts.
package cameratest

import (
	"strconv"
	"strings"
)

// IDCase is one id and whether the camera id rule accepts it.
type IDCase struct {
	Name  string
	ID    string
	Valid bool
}

// IDCases returns the edge cases of the camera id rule.
func IDCases() []IDCase {
	return []IDCase{
		{"digits", "7", true},
		{"letters digits dash underscore", "cam_A-1", true},
		{"dash only", "-", true},
		{"underscore only", "_", true},
		{"leading zero", "0042", true},
		{"largest API id", strconv.FormatInt(1<<63-1, 10), true},
		{"64 characters", strings.Repeat("a", 64), true},
		{"64 digits", strings.Repeat("9", 64), true},
		{"65 characters", strings.Repeat("a", 65), false},
		{"128 characters", strings.Repeat("a", 128), false},
		{"empty", "", false},
		{"dot splits a subject", "cam.1", false},
		{"dot", ".", false},
		{"dot dot", "..", false},
		{"slash", "cam/1", false},
		{"leading slash", "/cam", false},
		{"backslash", `cam\1`, false},
		{"parent path", "../cam", false},
		{"star wildcard", "*", false},
		{"star in id", "cam*", false},
		{"gt wildcard", ">", false},
		{"gt in id", "cam>", false},
		{"space", "cam 1", false},
		{"leading space", " cam", false},
		{"trailing space", "cam ", false},
		{"tab", "cam\t1", false},
		{"newline", "cam\n", false},
		{"nul", "cam\x00", false},
		{"plus sign", "+7", false},
		{"colon", "cam:1", false},
		{"dollar", "$KV", false},
		{"percent encoded dot", "%2e", false},
		{"accented letter", "câmera", false},
		{"fullwidth digit", "７", false},
		{"emoji", "cam📷", false},
		{"invalid utf-8", "cam\xff", false},
	}
}
