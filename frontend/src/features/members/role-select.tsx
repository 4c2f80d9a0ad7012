import { ROLES, type Role } from '@/features/projects/role';

const SELECT =
  'h-8 cursor-pointer rounded-md border bg-card px-2 text-sm shadow-xs outline-none focus-visible:border-primary focus-visible:ring-2 focus-visible:ring-primary/20 disabled:cursor-not-allowed disabled:opacity-50';

/** "Also uploads, asks, reviews and shares": what a role may do, as a sentence. */
export function roleHint(role: Role): string {
  const hint = ROLES.find((r) => r.value === role)!.hint;
  return hint.charAt(0).toUpperCase() + hint.slice(1);
}

/** A project role picker, for a member's role and for an invite's (the members dialog and the admin's invite). */
export function RoleSelect({ id, value, onChange, disabled, label }: { id?: string; value: Role; onChange: (r: Role) => void; disabled?: boolean; label: string }) {
  return (
    <select id={id} aria-label={label} className={SELECT} value={value} disabled={disabled} onChange={(e) => onChange(e.target.value as Role)}>
      {ROLES.map((r) => (
        <option key={r.value} value={r.value}>
          {r.label}
        </option>
      ))}
    </select>
  );
}
