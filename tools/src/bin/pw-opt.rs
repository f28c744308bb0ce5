//! pw-opt: see `pw_tools::opt`.

#![forbid(unsafe_code)]

fn main() {
    // A bug must still end as a one-line error and exit code 1, never as a
    // panic message with a backtrace.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("error: internal error in pw-opt: {info}");
    }));
    let code = std::panic::catch_unwind(|| {
        let stdin = &mut std::io::stdin().lock();
        let stdout = &mut std::io::stdout().lock();
        // Not locked: the panic hook, on whichever thread, must be able to
        // write.
        let stderr = &mut std::io::stderr();
        // The process exits right after: the OS frees the program faster.
        let mut args: Vec<_> = std::env::args_os().collect();
        if !args.iter().any(|a| a == "--disable-free") {
            args.insert(1.min(args.len()), "--disable-free".into());
        }
        pw_tools::opt::main(args, stdin, stdout, stderr)
    })
    .unwrap_or(1);
    std::process::exit(code);
}
