// Mentioning the process in a comment or "a process" in a string is fine;
// touching it is not.
const note = 'the process finished';
return process.env.HOME;
