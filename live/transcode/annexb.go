package transcode

// appendAnnexB appends nalus with 4-byte start codes.
func appendAnnexB(buf []byte, nalus [][]byte) []byte {
	for _, n := range nalus {
		if len(n) > 0 {
			buf = append(append(buf, 0, 0, 0, 1), n...)
		}
	}
	return buf
}

// splitAnnexB returns the NAL units of an Annex-B byte stream (3- or
// 4-byte start codes), sharing b's memory.
func splitAnnexB(b []byte) [][]byte {
	var out [][]byte
	start := -1
	i := 0
	for i+2 < len(b) {
		if b[i] == 0 && b[i+1] == 0 && b[i+2] == 1 {
			if start >= 0 {
				end := i
				if end > start && b[end-1] == 0 {
					end--
				}
				if end > start {
					out = append(out, b[start:end])
				}
			}
			i += 3
			start = i
			continue
		}
		i++
	}
	if start >= 0 && start < len(b) {
		out = append(out, b[start:])
	}
	return out
}
