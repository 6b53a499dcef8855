package software

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Pin names one npm package version and the integrity its tarball must have.
type Pin struct {
	// Package is the npm package name, e.g. "@agentos-software/sed".
	Package string
	// Version is the exact version to fetch.
	Version string
	// Integrity is the npm Subresource Integrity string of the tarball
	// (`npm view NAME@VERSION dist.integrity`); only sha512 is accepted.
	Integrity string
}

// Name returns the short name the store knows the package by: the npm name
// without its scope ("sed").
func (p Pin) Name() string {
	if i := strings.LastIndexByte(p.Package, '/'); i >= 0 {
		return p.Package[i+1:]
	}
	return p.Package
}

// Spec returns the npm spec "NAME@VERSION".
func (p Pin) Spec() string { return p.Package + "@" + p.Version }

// defaultPins is the agentOS default userland (the dependencies of
// @agentos-software/common@0.2.21). Integrity values are the registry's
// dist.integrity for each version.
var defaultPins = []Pin{
	{"@agentos-software/coreutils", "0.3.4", "sha512-tGd0gQjUjHnm+5KgOBwidwUtlkKnl9biQuD7X2sZl15VOhYqUJpnyLF33h/nF3r9WtOTclSiLj/dc2xCxmAXnw=="},
	{"@agentos-software/sed", "0.3.4", "sha512-J10nZnZmme2SvXK5WMK2unQlOVncMQVUCS20GZB579a2gNoayLJYHGvfJ9a4+42wOHgDKL1u74byWlydCkEyOQ=="},
	{"@agentos-software/gawk", "0.3.4", "sha512-NlU6nGxoqIUc1I2zdBHFwH04gE0tBygP2FcBO12VBptty7lbgq1CNLk909jIcSNFEwlm3VRPHeZNkbdVKZ2Ujg=="},
	{"@agentos-software/findutils", "0.3.4", "sha512-wjBWE3lkXe70fRj6da1+2MM/7KlPcBRhr2BycvgvAtglOT/0PtabFU9CrDuX3Vm/8acU/8tw35+WeitPOLi9mg=="},
	{"@agentos-software/diffutils", "0.3.4", "sha512-a5Do+ERMdHPwT0Vrp35fxSgrsJNK8wCsYX8dOAomH9N+xJyV2Hb7/LLyp7XxqGk9BEjMeA6UhbH5ZY/HAlx5sQ=="},
	{"@agentos-software/tar", "0.3.5", "sha512-hSf6PY4q1luIomFSDgVHxVDDIPdAVZxdgwrQFEYH4aIE6TXX9qatVmzR36uYLWpnFGAZTR6srREGoTnmOGV4Lg=="},
	{"@agentos-software/gzip", "0.3.4", "sha512-l7Y/Vwiwsqgna68yYwdNCnUBPGBg5zdmtjEFeG3hnDDFLe/02h17q0gUIqJmDBIAy1q9GoizqcFi7zXO2xygKg=="},
	{"@agentos-software/grep", "0.3.4", "sha512-Bta2Ljl+kCX/3Bjg06Q9N9LPRcf13S92lHRaYG+CeGVDXabIIgkHLUGIQlI1OKuIr7IRAktjgelUAuJnxGFvvw=="},
}

// DefaultPins returns the pinned default package set, in the order that
// decides which package wins when two provide the same command.
func DefaultPins() []Pin { return slices.Clone(defaultPins) }

var (
	// npm package names: lower case, URL-safe, optionally scoped. The short
	// name doubles as a file name in the cache, so it must stay simple.
	npmNameRE = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*$`)
	versionRE = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z.+-]*$`)
)

// sha512 returns the digest an integrity string pins.
func (p Pin) sha512() ([]byte, error) {
	b64, ok := strings.CutPrefix(p.Integrity, "sha512-")
	if !ok {
		return nil, fmt.Errorf("%w: %s: integrity %q is not sha512", ErrInvalidPin, p.Spec(), p.Integrity)
	}
	sum, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil || len(sum) != 64 {
		return nil, fmt.Errorf("%w: %s: integrity %q is not a sha512 digest", ErrInvalidPin, p.Spec(), p.Integrity)
	}
	return sum, nil
}

func (p Pin) validate() error {
	if len(p.Package) > 214 || !npmNameRE.MatchString(p.Package) {
		return fmt.Errorf("%w: package name %q", ErrInvalidPin, p.Package)
	}
	if len(p.Version) > 64 || !versionRE.MatchString(p.Version) {
		return fmt.Errorf("%w: %s: version %q", ErrInvalidPin, p.Package, p.Version)
	}
	_, err := p.sha512()
	return err
}

// integrityOf formats a sha512 digest as an SRI string.
func integrityOf(sum []byte) string {
	return "sha512-" + base64.StdEncoding.EncodeToString(sum)
}
