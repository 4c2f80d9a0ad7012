/** The server refuses shorter passwords (422); the forms say so before sending. */
export const MIN_PASSWORD_LENGTH = 8;

export const TOO_SHORT = `A password needs at least ${MIN_PASSWORD_LENGTH} characters.`;

/** What is wrong with a new password and its confirmation, or null when they can be sent. */
export function newPasswordProblem(password: string, confirm?: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return TOO_SHORT;
  if (confirm !== undefined && password !== confirm) return 'The new password and its confirmation differ.';
  return null;
}
