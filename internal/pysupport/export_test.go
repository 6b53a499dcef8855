package pysupport

// SetSiteCustomizeForTest replaces sitecustomize.py's source until the
// returned function restores it: a changed support file, for the
// bytecode's fingerprint.
func SetSiteCustomizeForTest(b []byte) (restore func()) {
	old := siteCustomize
	siteCustomize = b
	return func() { siteCustomize = old }
}

// FileForTest returns the bytecode of one guest path.
func (b *Bytecode) FileForTest(p string) []byte { return b.files[p] }
