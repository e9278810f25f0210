// Mentioning the process in a comment or "a process" in a string is fine,
// and so is touching it: the realm has no process, so the tool fails itself.
const note = 'the process finished';
return process.env.HOME;
