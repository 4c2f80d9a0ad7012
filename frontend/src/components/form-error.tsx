/** A form's problem, said as a sentence under its fields (nothing when there is none). */
export function FormError({ children }: { children: string | null }) {
  if (!children) return null;
  return (
    <p role="alert" className="text-sm text-destructive">
      {children}
    </p>
  );
}
