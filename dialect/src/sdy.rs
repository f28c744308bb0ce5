//! Reads the Shardy attributes JAX puts on the computations it lowers.
//!
//! Shardy is not linked into pw, so its attributes reach us as opaque
//! attributes; this module parses their printed form, which is stable:
//! `#sdy.mesh<["x"=2, "y"=4]>` and `#sdy.sharding<@mesh, [{"x"}, {}]>`.

use pw_core::geometry::{MeshShape, Sharding};

/// A sharding as a computation declares it: against a named Shardy mesh.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SdySharding {
    pub mesh: String,
    pub sharding: Sharding,
}

/// Parses `#sdy.mesh<["x"=2, ...]>` (device ids, if present, are ignored).
pub fn parse_mesh(text: &str) -> Result<MeshShape, String> {
    let body = strip(text, "#sdy.mesh<")?;
    let mut p = Parser::new(body);
    p.expect('[')?;
    let mut axes = Vec::new();
    if !p.eat(']') {
        loop {
            let name = p.string()?;
            p.expect('=')?;
            let size = p.integer()?;
            axes.push((name, size));
            if p.eat(']') {
                break;
            }
            p.expect(',')?;
        }
    }
    Ok(MeshShape::new(axes))
}

/// Parses `#sdy.sharding<@mesh, [{"x"}, {}]>`. Open dimensions (`{?}`) and
/// open suffixes (`{"x", ?}`) read as their closed part.
pub fn parse_sharding(text: &str) -> Result<SdySharding, String> {
    let body = strip(text, "#sdy.sharding<")?;
    let mut p = Parser::new(body);
    p.expect('@')?;
    let mesh = p.identifier()?;
    p.expect(',')?;
    p.expect('[')?;
    let mut dims = Vec::new();
    if !p.eat(']') {
        loop {
            p.expect('{')?;
            let mut axes = Vec::new();
            while !p.eat('}') {
                if p.eat('?') {
                    continue;
                }
                if p.eat(',') {
                    continue;
                }
                axes.push(p.string()?);
                if p.peek() == Some(':') {
                    return Err(format!("sub-axis shardings are not supported: {text}"));
                }
            }
            dims.push(axes);
            if p.eat(']') {
                break;
            }
            p.expect(',')?;
        }
    }
    Ok(SdySharding {
        mesh,
        sharding: Sharding { dims },
    })
}

fn strip<'a>(text: &'a str, prefix: &str) -> Result<&'a str, String> {
    text.trim()
        .strip_prefix(prefix)
        .ok_or_else(|| format!("expected {prefix}...>, found {text}"))
}

struct Parser<'a> {
    rest: &'a str,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Self { rest: text }
    }

    fn skip_space(&mut self) {
        self.rest = self.rest.trim_start();
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.rest.chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.rest = &self.rest[c.len_utf8()..];
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected '{c}' at '{}'", self.rest))
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect('"')?;
        let end = self
            .rest
            .find('"')
            .ok_or_else(|| "unterminated string".to_owned())?;
        let s = self.rest[..end].to_owned();
        self.rest = &self.rest[end + 1..];
        Ok(s)
    }

    fn identifier(&mut self) -> Result<String, String> {
        self.skip_space();
        if self.rest.starts_with('"') {
            return self.string();
        }
        let end = self
            .rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '$'))
            .unwrap_or(self.rest.len());
        if end == 0 {
            return Err(format!("expected a name at '{}'", self.rest));
        }
        let s = self.rest[..end].to_owned();
        self.rest = &self.rest[end..];
        Ok(s)
    }

    fn integer(&mut self) -> Result<i64, String> {
        self.skip_space();
        let end = self
            .rest
            .find(|c: char| !(c.is_ascii_digit() || c == '-'))
            .unwrap_or(self.rest.len());
        let value = self.rest[..end]
            .parse()
            .map_err(|_| format!("expected an integer at '{}'", self.rest))?;
        self.rest = &self.rest[end..];
        Ok(value)
    }
}
