return { big: 10n };
