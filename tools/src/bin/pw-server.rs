//! pw-server: see `pw_tools::server`.

fn main() {
    std::process::exit(pw_tools::server::main(std::env::args_os().collect()));
}
