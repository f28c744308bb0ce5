//! Kubernetes' rules for names, checked before anything is printed, so a bad
//! name is refused by pw-deploy with the rule it breaks rather than by the
//! API server after half of the objects were created.

/// The longest DNS label (RFC 1035 and RFC 1123): 63 characters.
pub const MAX_LABEL: usize = 63;

/// The longest DNS subdomain (RFC 1123): 253 characters.
pub const MAX_SUBDOMAIN: usize = 253;

/// Returns why `name` is not a DNS-1035 label (what Kubernetes requires of
/// Service names, JobSet names and the Job and Pod names derived from them):
/// at most 63 characters, lower-case letters, digits and '-', starting with
/// a letter and ending with a letter or digit. `None` when it is one.
pub fn dns1035_label(name: &str) -> Option<String> {
    label(name, |c| c.is_ascii_lowercase())
        .map(|why| format!("{why} (a DNS-1035 label: at most {MAX_LABEL} characters of a-z, 0-9 and '-', starting with a letter and ending with a letter or digit)"))
}

/// Returns why `name` is not a DNS-1123 label (what Kubernetes requires of
/// namespaces): as a DNS-1035 label, but it may start with a digit.
pub fn dns1123_label(name: &str) -> Option<String> {
    label(name, |c| c.is_ascii_lowercase() || c.is_ascii_digit())
        .map(|why| format!("{why} (a DNS-1123 label: at most {MAX_LABEL} characters of a-z, 0-9 and '-', starting and ending with a letter or digit)"))
}

/// Returns why `name` is not a DNS-1123 subdomain (what Kubernetes requires
/// of Secret names): dot-separated DNS-1123 labels, at most 253 characters.
pub fn dns1123_subdomain(name: &str) -> Option<String> {
    if name.len() > MAX_SUBDOMAIN {
        return Some(format!(
            "is {} characters long, more than {MAX_SUBDOMAIN} (a DNS-1123 subdomain)",
            name.len()
        ));
    }
    name.split('.')
        .find_map(|part| label(part, |c| c.is_ascii_lowercase() || c.is_ascii_digit()))
        .map(|why| format!("{why} (a DNS-1123 subdomain: dot-separated labels of a-z, 0-9 and '-', each starting and ending with a letter or digit)"))
}

/// Returns why `key` is not a Secret data key (letters, digits, '-', '_'
/// and '.', at most 253 characters).
pub fn secret_key(key: &str) -> Option<String> {
    if key.is_empty() {
        return Some("is empty".into());
    }
    if key.len() > MAX_SUBDOMAIN {
        return Some(format!("is longer than {MAX_SUBDOMAIN} characters"));
    }
    if key == "." || key == ".." {
        return Some("is '.' or '..'".into());
    }
    key.chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .map(|c| format!("has {c:?}; a Secret key has only letters, digits, '-', '_' and '.'"))
}

/// Returns why `key` is not a label key (an optional DNS-1123 subdomain
/// prefix and '/', then a name of at most 63 letters, digits, '-', '_' and
/// '.', starting and ending with a letter or digit).
pub fn label_key(key: &str) -> Option<String> {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix {
        if let Some(why) = dns1123_subdomain(p) {
            return Some(format!("its prefix {p:?} {why}"));
        }
    }
    if name.is_empty() {
        return Some("has an empty name".into());
    }
    label_value(name).map(|why| format!("its name {name:?} {why}"))
}

/// Returns why `value` is not a label value (empty, or at most 63 letters,
/// digits, '-', '_' and '.', starting and ending with a letter or digit).
pub fn label_value(value: &str) -> Option<String> {
    if value.is_empty() {
        return None;
    }
    if value.len() > MAX_LABEL {
        return Some(format!(
            "is {} characters long, more than {MAX_LABEL}",
            value.len()
        ));
    }
    if let Some(c) = value
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Some(format!(
            "has {c:?}; only letters, digits, '-', '_' and '.' are allowed"
        ));
    }
    let ends_ok = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    if !ends_ok(value.chars().next()) || !ends_ok(value.chars().last()) {
        return Some("must start and end with a letter or digit".into());
    }
    None
}

/// Returns why `name` is not a DNS label whose first character satisfies
/// `first`.
fn label(name: &str, first: impl Fn(char) -> bool) -> Option<String> {
    if name.is_empty() {
        return Some("is empty".into());
    }
    if name.len() > MAX_LABEL {
        return Some(format!(
            "is {} characters long, more than {MAX_LABEL}",
            name.len()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Some(format!("has {c:?}"));
    }
    if !name.chars().next().is_some_and(first) {
        return Some("starts with a character it may not start with".into());
    }
    if name.ends_with('-') {
        return Some("ends with '-'".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns1035_labels() {
        for ok in ["a", "pw", "pw-1", "a-b-c", &"a".repeat(63)] {
            assert_eq!(dns1035_label(ok), None, "{ok}");
        }
        for bad in [
            "",
            "1pw",
            "-pw",
            "pw-",
            "Pw",
            "p_w",
            "p.w",
            "pé",
            &"a".repeat(64),
        ] {
            assert!(dns1035_label(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn dns1123_names() {
        assert_eq!(dns1123_label("1ns"), None);
        assert!(dns1123_label("ns-").is_some());
        assert_eq!(dns1123_subdomain("pw-token.v1"), None);
        assert!(dns1123_subdomain("pw..token").is_some());
        assert!(dns1123_subdomain("Pw").is_some());
        assert!(dns1123_subdomain(&"a.".repeat(127)).is_some());
    }

    #[test]
    fn label_keys_and_values() {
        assert_eq!(label_key("cloud.example/accelerator"), None);
        assert_eq!(label_key("pool"), None);
        assert!(label_key("a/b/c").is_some());
        assert!(label_key("/x").is_some());
        assert!(label_key("x/").is_some());
        assert_eq!(label_value(""), None);
        assert_eq!(label_value("v5e-8"), None);
        assert!(label_value("-v").is_some());
        assert!(label_value("a b").is_some());
    }

    #[test]
    fn secret_keys() {
        assert_eq!(secret_key("token"), None);
        assert_eq!(secret_key("PW_TOKEN.v2"), None);
        assert!(secret_key("").is_some());
        assert!(secret_key("a/b").is_some());
        assert!(secret_key("..").is_some());
    }
}
