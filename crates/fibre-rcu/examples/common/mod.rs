//! What the examples share: their `--flag N` command lines.

/// Reads `--name N` pairs into `flags` (each a flag and its value, holding
/// the default on entry). Every value is a positive integer.
///
/// # Errors
/// A message naming the flag: a missing, malformed or zero value, or an
/// unknown flag.
pub fn parse_counts(
    mut args: impl Iterator<Item = String>,
    flags: &mut [(&str, &mut usize)],
) -> Result<(), String> {
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a number"))?;
        let number = value
            .parse::<usize>()
            .map_err(|e| format!("{flag} {value:?}: {e}"))?;
        if number == 0 {
            return Err(format!("{flag} must be at least 1"));
        }
        let (_, slot) = flags
            .iter_mut()
            .find(|(name, _)| *name == flag)
            .ok_or(format!("unknown argument {flag:?}"))?;
        **slot = number;
    }
    Ok(())
}
