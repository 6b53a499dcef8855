package js

import (
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/node/hostnode"
)

// TestSmallRSAKeysFromTheVM: keys under 1024 bits generated in the VM
// (synchronously and not) are read by host node (OpenSSL checks a key as
// it loads it), which verifies their PKCS #1 v1.5 and PSS signatures and
// decrypts their OAEP ciphertexts and privateEncrypt blocks; the differential
// probe testdata/diff/crypto_rsa_small.js covers host-made keys in the VM.
func TestSmallRSAKeysFromTheVM(t *testing.T) {
	v := newVM(t, nil)
	r := v.node(`
const c = require('crypto'), P = c.constants, msg = Buffer.from('made in the vm');
const row = (k, pub) => {
  const h = (b) => b.toString('hex');
  console.log(h(k.export({ format: 'der', type: 'pkcs8' })), h(pub.export({ format: 'der', type: 'spki' })),
    h(c.sign('sha256', msg, k)),
    h(c.sign('sha1', msg, { key: k, padding: P.RSA_PKCS1_PSS_PADDING, saltLength: 20 })),
    h(c.publicEncrypt(pub, msg)),
    h(c.privateEncrypt(k, msg)));
};
for (const [modulusLength, publicExponent] of [[512, 65537], [513, 3], [1000, 17]]) {
  const { privateKey, publicKey } = c.generateKeyPairSync('rsa', { modulusLength, publicExponent });
  row(privateKey, publicKey);
}
c.generateKeyPair('rsa', { modulusLength: 640 }, (err, pub, k) => { if (err) throw err; row(k, pub); });
`)
	if r.code != 0 {
		t.Fatalf("code %d stderr %s", r.code, trunc(r.stderr))
	}
	out := hostnode.Run(t, `
const c = require('crypto'), P = c.constants, msg = Buffer.from('made in the vm');
for (const l of require('fs').readFileSync(0, 'utf8').trim().split('\n')) {
  const [der, spki, sig, pss, oaep, pe] = l.split(' ').map((x) => Buffer.from(x, 'hex'));
  const k = c.createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  const pub = c.createPublicKey({ key: spki, format: 'der', type: 'spki' });
  const d = pub.asymmetricKeyDetails;
  console.log(d.modulusLength, d.publicExponent, c.verify('sha256', msg, pub, sig),
    c.verify('sha1', msg, { key: pub, padding: P.RSA_PKCS1_PSS_PADDING, saltLength: 20 }, pss),
    c.privateDecrypt(k, oaep).equals(msg),
    c.publicDecrypt(pub, pe).equals(msg));
}
`, r.stdout)
	want := "512 65537n true true true true\n513 3n true true true true\n1000 17n true true true true\n640 65537n true true true true\n"
	if string(out) != want {
		t.Fatalf("host node says\n%s\nwant\n%s", out, want)
	}
	if strings.Count(r.stdout, "\n") != 4 {
		t.Fatalf("vm printed %q", r.stdout)
	}
}
