package main

import "io/fs"

// permBits are the bits permOf reports: permissions and the set-user-ID,
// set-group-ID and sticky bits.
const permBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// fromUnixMode turns st_mode's low twelve bits into fs.FileMode bits.
func fromUnixMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	if m&0o4000 != 0 {
		mode |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		mode |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// toUnixMode is fromUnixMode's inverse.
func toUnixMode(mode fs.FileMode) uint32 {
	m := uint32(mode & 0o777)
	if mode&fs.ModeSetuid != 0 {
		m |= 0o4000
	}
	if mode&fs.ModeSetgid != 0 {
		m |= 0o2000
	}
	if mode&fs.ModeSticky != 0 {
		m |= 0o1000
	}
	return m
}
