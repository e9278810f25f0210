// @nocheck
return await import('fs');
