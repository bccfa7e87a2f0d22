package decoder

// ScaledSize returns the size of a picture of srcW x srcH scaled to width,
// keeping the aspect ratio, both sides even and at least 2. A width of 0 or
// at least srcW keeps the source size (pictures are never enlarged).
func ScaledSize(srcW, srcH, width int) (w, h int) {
	if srcW <= 0 || srcH <= 0 {
		return 0, 0
	}
	if width <= 0 || width >= srcW {
		return srcW, srcH
	}
	w = width &^ 1
	h = int((int64(srcH)*int64(w)+int64(srcW)/2)/int64(srcW)) &^ 1
	if w < 2 {
		w = 2
	}
	if h < 2 {
		h = 2
	}
	return w, h
}
