import { Loader2 } from 'lucide-react';
import { useId, useState, type ReactNode } from 'react';
import { FormError } from '@/components/form-error';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import type { Role } from '@/features/projects/role';
import { RoleSelect, roleHint } from './role-select';

/**
 * An email, a role and a button: how owners add a member (who has an account) and invite one
 * (who has none) in the members dialog. `onSubmit` gets the trimmed email and resolves true when
 * done, which empties the field.
 */
export function EmailRoleForm({
  label,
  placeholder,
  roleLabel,
  button,
  icon,
  note,
  pending,
  error,
  onSubmit,
  onEdit,
}: {
  label: string;
  placeholder: string;
  roleLabel: string;
  button: string;
  icon: ReactNode;
  note: string;
  pending: boolean;
  error: string | null;
  onSubmit: (email: string, role: Role, done: () => void) => void;
  onEdit: () => void;
}) {
  const id = useId();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('editor');
  return (
    <form
      className="grid gap-2"
      onSubmit={(e) => {
        e.preventDefault();
        if (email.trim()) onSubmit(email.trim(), role, () => setEmail(''));
      }}
    >
      <label htmlFor={`${id}-email`} className="text-sm font-medium">
        {label}
      </label>
      <div className="flex flex-wrap gap-2">
        <Input
          id={`${id}-email`}
          type="email"
          placeholder={placeholder}
          autoComplete="off"
          className="min-w-48 flex-1"
          value={email}
          onChange={(e) => {
            setEmail(e.target.value);
            onEdit();
          }}
        />
        <RoleSelect label={roleLabel} value={role} onChange={setRole} />
        <Button type="submit" className="h-8" size="sm" disabled={!email.trim() || pending}>
          {pending ? <Loader2 className="animate-spin" /> : icon} {button}
        </Button>
      </div>
      <p className="text-xs text-muted-foreground">
        {roleHint(role)}. {note}
      </p>
      <FormError>{error}</FormError>
    </form>
  );
}
