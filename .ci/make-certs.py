#!/usr/bin/env python3
"""Makes the TLS fixtures of Courier's interop servers, fresh, in one directory (usage: make-certs.py DIR).

Everything is generated at start-up (`.ci/start-servers.sh`); nothing private is committed.
All keys are RSA-2048 (as the benchmarks' certificate). Files, all PEM unless said:

  ca.crt, ca.key                  the test CA, trusted by the tests
  server.crt, server.key          signed by ca; SAN IP:127.0.0.1, DNS:localhost; valid now - 1 h .. now + 5 days
  expired.crt, expired.key        signed by ca; SAN IP:127.0.0.1, DNS:localhost; notAfter 1 day in the past
  wronghost.crt, wronghost.key    signed by ca; SAN DNS:wrong.example only
  selfsigned.crt, selfsigned.key  its own issuer (not signed by ca); SAN IP:127.0.0.1, DNS:localhost
  other-ca.crt, other-ca.key      an unrelated CA that no server uses (trusting only it must fail)
  client-ca.crt, client-ca.key    the CA that the mutual-TLS servers trust for client certificates
  client.crt, client.key          client certificate (clientAuth) signed by client-ca
  client-combined.pem             client.crt then client.key in one file
  client.p12                      client key + certificate (+ client-ca), PKCS#12, password "courier"
                                  (PBES1 3DES / SHA-1 MAC, which every PKCS#12 reader accepts)
  rogue-ca.crt, rogue-client.crt, rogue-client.key
                                  a client certificate from a CA that no server trusts
  capath/                         a hashed CA directory holding only ca.crt (`openssl rehash`)
  server.pin                      curl --pinnedpubkey value of server.crt: sha256//base64(SHA-256(SPKI DER))
  wrong.pin                       the same for other-ca's key: a pin that never matches
"""
import base64
import datetime
import hashlib
import ipaddress
import os
import shutil
import subprocess
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

P12_PASSWORD = b"courier"
NOW = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
HOUR = datetime.timedelta(hours=1)
DAY = datetime.timedelta(days=1)


def key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Courier tests"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def certificate(subject, subject_key, issuer=None, issuer_key=None, *, ca=False, sans=(), client=False,
                not_before=NOW - HOUR, not_after=NOW + 5 * DAY):
    """A certificate for subject_key; self-signed when issuer is None."""
    issuer_name = issuer.subject if issuer is not None else name(subject)
    signing_key = issuer_key if issuer is not None else subject_key
    public = subject_key.public_key()
    builder = (x509.CertificateBuilder()
               .subject_name(name(subject))
               .issuer_name(issuer_name)
               .public_key(public)
               .serial_number(x509.random_serial_number())
               .not_valid_before(not_before)
               .not_valid_after(not_after)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False))
    if issuer is not None:
        ski = issuer.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
        builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski), critical=False)
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                          data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                          encipher_only=False, decipher_only=False), critical=True)
    else:
        builder = builder.add_extension(
            x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=True,
                          data_encipherment=False, key_agreement=False, key_cert_sign=False, crl_sign=False,
                          encipher_only=False, decipher_only=False), critical=True)
        usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
    return builder.sign(signing_key, hashes.SHA256())


def pin(public_key):
    spki = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return "sha256//" + base64.b64encode(hashlib.sha256(spki).digest()).decode()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make-certs.py DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    def write(filename, data, private=False):
        path = os.path.join(out, filename)
        tmp = path + ".tmp"
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644), "wb") as f:
            f.write(data)
        os.replace(tmp, path)

    def pem(cert):
        return cert.public_bytes(serialization.Encoding.PEM)

    def pem_key(k):
        return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())

    def save(stem, cert, k):
        write(stem + ".crt", pem(cert))
        write(stem + ".key", pem_key(k), private=True)

    loopback = (x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost"))

    ca_key = key()
    ca = certificate("Courier Test CA", ca_key, ca=True)
    save("ca", ca, ca_key)

    server_key = key()
    save("server", certificate("127.0.0.1", server_key, ca, ca_key, sans=loopback), server_key)

    expired_key = key()
    save("expired", certificate("127.0.0.1 (expired)", expired_key, ca, ca_key, sans=loopback,
                                not_before=NOW - 10 * DAY, not_after=NOW - DAY), expired_key)

    wrong_key = key()
    save("wronghost", certificate("wrong.example", wrong_key, ca, ca_key,
                                  sans=(x509.DNSName("wrong.example"),)), wrong_key)

    self_key = key()
    save("selfsigned", certificate("127.0.0.1 (self-signed)", self_key, sans=loopback), self_key)

    other_key = key()
    save("other-ca", certificate("Courier Other CA (trusted by no server)", other_key, ca=True), other_key)

    client_ca_key = key()
    client_ca = certificate("Courier Test Client CA", client_ca_key, ca=True)
    save("client-ca", client_ca, client_ca_key)

    client_key = key()
    client = certificate("courier-client", client_key, client_ca, client_ca_key, client=True)
    save("client", client, client_key)
    write("client-combined.pem", pem(client) + pem_key(client_key), private=True)
    encryption = (serialization.PrivateFormat.PKCS12.encryption_builder()
                  .kdf_rounds(2048)
                  .key_cert_algorithm(pkcs12.PBES.PBESv1SHA1And3KeyTripleDESCBC)
                  .hmac_hash(hashes.SHA1())
                  .build(P12_PASSWORD))
    write("client.p12", pkcs12.serialize_key_and_certificates(b"courier-client", client_key, client, [client_ca], encryption),
          private=True)

    rogue_ca_key = key()
    rogue_ca = certificate("Courier Rogue Client CA", rogue_ca_key, ca=True)
    save("rogue-ca", rogue_ca, rogue_ca_key)
    rogue_key = key()
    save("rogue-client", certificate("courier-client", rogue_key, rogue_ca, rogue_ca_key, client=True), rogue_key)

    # A hashed directory with the test CA only (what CURLOPT_CAPATH / SSL_CERT_DIR expect).
    capath = os.path.join(out, "capath")
    shutil.rmtree(capath, ignore_errors=True)
    os.makedirs(capath)
    shutil.copyfile(os.path.join(out, "ca.crt"), os.path.join(capath, "ca.crt"))
    subprocess.run(["openssl", "rehash", capath], check=True)

    write("server.pin", (pin(server_key.public_key()) + "\n").encode())
    write("wrong.pin", (pin(other_key.public_key()) + "\n").encode())


if __name__ == "__main__":
    main()
