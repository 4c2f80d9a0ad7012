import { Input, Label } from '@/components/ui/input';
import { MIN_PASSWORD_LENGTH } from './password';

export type PasswordChangeValues = { current: string; next: string; confirm: string };

/** The three fields of a password change: the password one has, the new one, the new one again. */
export function PasswordChangeFields({
  idPrefix,
  currentLabel,
  values,
  onChange,
}: {
  idPrefix: string;
  currentLabel: string;
  values: PasswordChangeValues;
  onChange: (values: PasswordChangeValues) => void;
}) {
  const field = (key: keyof PasswordChangeValues) => ({
    value: values[key],
    onChange: (e: React.ChangeEvent<HTMLInputElement>) => onChange({ ...values, [key]: e.target.value }),
    required: true,
    type: 'password',
  });
  return (
    <>
      <div className="grid gap-2">
        <Label htmlFor={`${idPrefix}current-password`}>{currentLabel}</Label>
        <Input id={`${idPrefix}current-password`} autoComplete="current-password" autoFocus {...field('current')} />
      </div>
      <div className="grid gap-2">
        <Label htmlFor={`${idPrefix}new-password`}>New password</Label>
        <Input id={`${idPrefix}new-password`} autoComplete="new-password" aria-describedby={`${idPrefix}new-password-hint`} {...field('next')} />
        <p id={`${idPrefix}new-password-hint`} className="text-xs text-muted-foreground">
          At least {MIN_PASSWORD_LENGTH} characters.
        </p>
      </div>
      <div className="grid gap-2">
        <Label htmlFor={`${idPrefix}confirm-password`}>Confirm new password</Label>
        <Input id={`${idPrefix}confirm-password`} autoComplete="new-password" {...field('confirm')} />
      </div>
    </>
  );
}
