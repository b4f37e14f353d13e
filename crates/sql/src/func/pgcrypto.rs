//! The functions of the `pgcrypto` extension that Strata has: digest and
//! hmac (md5, sha1, sha224, sha256, sha384, sha512), crypt and gen_salt
//! for bcrypt (`bf`) and MD5-crypt (`md5`) password hashes,
//! gen_random_bytes and gen_random_uuid, with pgcrypto's errors.
//!
//! Not here: the PGP functions, raw encrypt/decrypt, armor, and the DES
//! and extended-DES password hashes (`des`, `xdes`), which fail with
//! 0A000.

use base64::Engine as _;
use sha2::Digest as _;
use sqltypes::Value;

use crate::error::Result;
use crate::{bail, err};

/// One function, named by its pg_proc `prosrc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CryptoFunc {
    /// digest(data, type)
    Digest,
    /// hmac(data, key, type)
    Hmac,
    /// crypt(password, salt)
    Crypt,
    /// gen_salt(type)
    GenSalt,
    /// gen_salt(type, rounds)
    GenSaltRounds,
    /// gen_random_bytes(count)
    RandomBytes,
    /// gen_random_uuid()
    RandomUuid,
}

impl CryptoFunc {
    /// The function whose C symbol (pg_proc.prosrc) is `src`.
    pub fn from_src(src: &str) -> Option<CryptoFunc> {
        Some(match src {
            "pg_digest" => CryptoFunc::Digest,
            "pg_hmac" => CryptoFunc::Hmac,
            "pg_crypt" => CryptoFunc::Crypt,
            "pg_gen_salt" => CryptoFunc::GenSalt,
            "pg_gen_salt_rounds" => CryptoFunc::GenSaltRounds,
            "pg_random_bytes" => CryptoFunc::RandomBytes,
            "pg_random_uuid" => CryptoFunc::RandomUuid,
            _ => return None,
        })
    }
}

/// Evaluates `f` (all but gen_random_uuid are strict).
pub fn call(f: CryptoFunc, args: Vec<Value>) -> Result<Value> {
    if f == CryptoFunc::RandomUuid {
        return Ok(Value::Uuid(sqltypes::uuid::v4(rand::random())));
    }
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let bytes = |i: usize| -> &[u8] {
        match &args[i] {
            Value::Bytea(b) => b,
            Value::Text(s) => s.as_bytes(),
            _ => &[],
        }
    };
    let text = |i: usize| -> &str {
        match &args[i] {
            Value::Text(s) => s,
            _ => "",
        }
    };
    Ok(match f {
        CryptoFunc::Digest => Value::Bytea(Algorithm::named(text(1))?.digest(bytes(0))),
        CryptoFunc::Hmac => Value::Bytea(Algorithm::named(text(2))?.hmac(bytes(0), bytes(1))),
        CryptoFunc::Crypt => Value::Text(crypt(text(0), text(1))?),
        CryptoFunc::GenSalt => Value::Text(gen_salt(text(0), None)?),
        CryptoFunc::GenSaltRounds => {
            let rounds = match args[1] {
                Value::Int4(n) => n,
                _ => 0,
            };
            Value::Text(gen_salt(text(0), Some(rounds))?)
        }
        CryptoFunc::RandomBytes => {
            let n = match args[0] {
                Value::Int4(n) => n,
                _ => 0,
            };
            if !(1..=1024).contains(&n) {
                bail!(ExternalRoutineInvocationException, "Length not in range");
            }
            Value::Bytea((0..n).map(|_| rand::random::<u8>()).collect())
        }
        CryptoFunc::RandomUuid => unreachable!("returned above"),
    })
}

/// A hash algorithm digest and hmac accept (names in any case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Algorithm {
    Md5,
    Sha1,
    Sha224,
    Sha256,
    Sha384,
    Sha512,
}

impl Algorithm {
    fn named(name: &str) -> Result<Algorithm> {
        Ok(match name.to_ascii_lowercase().as_str() {
            "md5" => Algorithm::Md5,
            "sha1" => Algorithm::Sha1,
            "sha224" => Algorithm::Sha224,
            "sha256" => Algorithm::Sha256,
            "sha384" => Algorithm::Sha384,
            "sha512" => Algorithm::Sha512,
            _ => bail!(InvalidParameterValue, "Cannot use \"{name}\": No such hash algorithm"),
        })
    }

    fn digest(self, data: &[u8]) -> Vec<u8> {
        match self {
            Algorithm::Md5 => md5::Md5::digest(data).to_vec(),
            Algorithm::Sha1 => sha1::Sha1::digest(data).to_vec(),
            Algorithm::Sha224 => sha2::Sha224::digest(data).to_vec(),
            Algorithm::Sha256 => sha2::Sha256::digest(data).to_vec(),
            Algorithm::Sha384 => sha2::Sha384::digest(data).to_vec(),
            Algorithm::Sha512 => sha2::Sha512::digest(data).to_vec(),
        }
    }

    fn hmac(self, data: &[u8], key: &[u8]) -> Vec<u8> {
        fn run<M: hmac::Mac + hmac::digest::KeyInit>(data: &[u8], key: &[u8]) -> Vec<u8> {
            let mut m = <M as hmac::digest::KeyInit>::new_from_slice(key)
                .expect("HMAC takes keys of any length");
            m.update(data);
            m.finalize().into_bytes().to_vec()
        }
        match self {
            Algorithm::Md5 => run::<hmac::Hmac<md5::Md5>>(data, key),
            Algorithm::Sha1 => run::<hmac::Hmac<sha1::Sha1>>(data, key),
            Algorithm::Sha224 => run::<hmac::Hmac<sha2::Sha224>>(data, key),
            Algorithm::Sha256 => run::<hmac::Hmac<sha2::Sha256>>(data, key),
            Algorithm::Sha384 => run::<hmac::Hmac<sha2::Sha384>>(data, key),
            Algorithm::Sha512 => run::<hmac::Hmac<sha2::Sha512>>(data, key),
        }
    }
}

/// The alphabet of crypt(3) salts and hashes.
const CRYPT64: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// bcrypt's base64: its own alphabet, no padding, trailing bits ignored (a
/// 22-character salt holds 128 bits in 132).
const BCRYPT64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::BCRYPT,
    base64::engine::GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(true),
);

/// gen_salt(type [, rounds]): a random salt for crypt(). Zero rounds
/// means the scheme's default.
fn gen_salt(kind: &str, rounds: Option<i32>) -> Result<String> {
    let rounds = rounds.filter(|&r| r != 0);
    let bad_rounds = || err!(InvalidParameterValue, "gen_salt: Incorrect number of rounds");
    match kind.to_ascii_lowercase().as_str() {
        "bf" => {
            let rounds = rounds.unwrap_or(6);
            if !(4..=31).contains(&rounds) {
                return Err(bad_rounds());
            }
            let salt: [u8; 16] = rand::random();
            Ok(format!("$2a${rounds:02}${}", BCRYPT64.encode(salt)))
        }
        "md5" => {
            if rounds.is_some() {
                return Err(bad_rounds());
            }
            let salt: String =
                (0..8).map(|_| CRYPT64[rand::random::<u8>() as usize % 64] as char).collect();
            Ok(format!("$1${salt}"))
        }
        "des" | "xdes" => bail!(FeatureNotSupported, "gen_salt: {kind} is not supported"),
        _ => bail!(InvalidParameterValue, "gen_salt: Unknown salt algorithm"),
    }
}

/// crypt(password, salt): the password's hash in the scheme the salt (or a
/// stored hash, whose salt part is used) names.
fn crypt(password: &str, salt: &str) -> Result<String> {
    if let Some(rest) = salt.strip_prefix("$2a$").or_else(|| salt.strip_prefix("$2x$")) {
        if salt.starts_with("$2x$") && !password.is_ascii() {
            // PostgreSQL reproduces an old sign-extension bug for $2x$.
            bail!(
                FeatureNotSupported,
                "crypt: $2x$ hashes of non-ASCII passwords are not supported"
            );
        }
        return bcrypt(password, &salt[..3], rest);
    }
    if let Some(rest) = salt.strip_prefix("$1$") {
        return Ok(md5_crypt(password.as_bytes(), rest));
    }
    if salt.len() < 2 {
        bail!(InvalidParameterValue, "invalid salt");
    }
    bail!(FeatureNotSupported, "crypt: DES-based password hashes are not supported")
}

/// bcrypt with a salt `$2a$` or `$2x$` (`version`), `NN$` and 22 salt
/// characters (anything after them is ignored).
fn bcrypt(password: &str, version: &str, rest: &str) -> Result<String> {
    let invalid = || err!(InvalidParameterValue, "invalid salt");
    let (cost, salt) = rest.split_once('$').ok_or_else(invalid)?;
    if cost.len() != 2 || !cost.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid());
    }
    let cost: u32 = cost.parse().map_err(|_| invalid())?;
    let salt = salt.get(..22).ok_or_else(invalid)?;
    if !(4..=31).contains(&cost) || !salt.bytes().all(|b| CRYPT64.contains(&b)) {
        return Err(invalid());
    }
    let decoded = BCRYPT64.decode(salt).map_err(|_| invalid())?;
    let salt: [u8; 16] = decoded.try_into().map_err(|_| invalid())?;
    let parts = bcrypt::hash_with_salt(password, cost, salt).map_err(|_| invalid())?;
    let hashed = parts.format_for_version(bcrypt::Version::TwoA);
    Ok(format!("{version}{}", &hashed[3..]))
}

/// MD5-crypt (`$1$`, Poul-Henning Kamp's scheme): up to 8 salt characters
/// (to the next `$`), 1000 rounds of MD5.
fn md5_crypt(password: &[u8], rest: &str) -> String {
    const MAGIC: &[u8] = b"$1$";
    let salt = rest.split('$').next().unwrap_or_default().as_bytes();
    let salt = &salt[..salt.len().min(8)];
    let mut alt = md5::Md5::new();
    alt.update(password);
    alt.update(salt);
    alt.update(password);
    let alt = alt.finalize();
    let mut ctx = md5::Md5::new();
    ctx.update(password);
    ctx.update(MAGIC);
    ctx.update(salt);
    for chunk in password.chunks(16) {
        ctx.update(&alt[..chunk.len()]);
    }
    let mut i = password.len();
    while i > 0 {
        match i & 1 {
            1 => ctx.update([0u8]),
            _ => ctx.update(&password[..1]),
        }
        i >>= 1;
    }
    let mut fin = ctx.finalize();
    for round in 0..1000 {
        let mut c = md5::Md5::new();
        if round & 1 == 1 {
            c.update(password);
        } else {
            c.update(fin);
        }
        if round % 3 != 0 {
            c.update(salt);
        }
        if round % 7 != 0 {
            c.update(password);
        }
        if round & 1 == 1 {
            c.update(fin);
        } else {
            c.update(password);
        }
        fin = c.finalize();
    }
    let mut out = String::from_utf8_lossy(MAGIC).into_owned();
    out.push_str(&String::from_utf8_lossy(salt));
    out.push('$');
    let mut put = |v: u32, n: usize| {
        for k in 0..n {
            out.push(CRYPT64[((v >> (6 * k)) & 0x3f) as usize] as char);
        }
    };
    let f = |i: usize| u32::from(fin[i]);
    for (a, b, c) in [(0, 6, 12), (1, 7, 13), (2, 8, 14), (3, 9, 15), (4, 10, 5)] {
        put((f(a) << 16) | (f(b) << 8) | f(c), 4);
    }
    put(f(11), 2);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hashes PostgreSQL 15's pgcrypto returns for the same calls.
    #[test]
    fn crypt_matches_postgres() {
        let bf = crypt("pw", "$2a$06$abcdefghijklmnopqrstuv").expect("bf");
        assert_eq!(bf, "$2a$06$abcdefghijklmnopqrstuuXOw8daVruAKMR3X3ty3bsuEmsp0E2Ba");
        // A stored hash works as its own salt.
        assert_eq!(crypt("pw", &bf).expect("bf"), bf);
        let empty = crypt("", "$2a$06$abcdefghijklmnopqrstuv").expect("bf");
        assert_eq!(empty, "$2a$06$abcdefghijklmnopqrstuuDqVCX9YSxXQXEJE1On1Ptib/W28qLxG");
        let md5 = crypt("pw", "$1$abcdefgh").expect("md5");
        assert_eq!(md5, "$1$abcdefgh$IQtUouv7y7Q9dRWkQEPCc.");
        assert_eq!(crypt("pw", "$1$abcdefghijk$zzz").expect("md5"), md5);
        for bad in ["$2a$03$abcdefghijklmnopqrstuv", "$2a$06$abc", ""] {
            let e = crypt("pw", bad).expect_err(bad);
            assert_eq!(e.message, "invalid salt", "{bad}");
        }
    }

    #[test]
    fn salts_round_trip_through_crypt() {
        for kind in ["bf", "BF", "md5"] {
            let salt = gen_salt(kind, None).expect("salt");
            let hash = crypt("secret", &salt).expect("crypt");
            assert_eq!(crypt("secret", &hash).expect("crypt"), hash);
            assert_ne!(crypt("other", &hash).expect("crypt"), hash);
        }
        assert!(gen_salt("bf", Some(4)).expect("salt").starts_with("$2a$04$"));
        for (kind, rounds) in [("bf", 3), ("bf", 32), ("md5", 5)] {
            let e = gen_salt(kind, Some(rounds)).expect_err("rounds");
            assert_eq!(e.message, "gen_salt: Incorrect number of rounds");
        }
        let e = gen_salt("foo", None).expect_err("kind");
        assert_eq!(e.message, "gen_salt: Unknown salt algorithm");
    }

    #[test]
    fn digests_and_hmacs_match_postgres() {
        let sha1 = Algorithm::named("SHA1").expect("sha1").digest(b"abc");
        assert_eq!(crate::func::digests::hex(&sha1), "a9993e364706816aba3e25717850c26c9cd0d89d");
        let mac = Algorithm::named("sha256").expect("sha256").hmac(b"abc", b"k");
        assert_eq!(
            crate::func::digests::hex(&mac),
            "342e519ce0ad6c03a36b98eeb3f1d130db4813b9df4d1160eda488d712dc78ee"
        );
        let e = Algorithm::named("sha3").expect_err("sha3");
        assert_eq!(e.message, "Cannot use \"sha3\": No such hash algorithm");
    }
}
