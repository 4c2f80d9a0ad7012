import { BarChart3 } from 'lucide-react';
import type { ReactNode } from 'react';

/** The centred card of the pages before sign-in (login, invite, single sign-on's landing). */
export function SignInCard({ subtitle, children, onSubmit }: { subtitle: string; children: ReactNode; onSubmit?: () => void }) {
  const inner = (
    <>
      <div className="flex items-center gap-2">
        <div className="flex size-9 items-center justify-center rounded-lg bg-primary text-primary-foreground">
          <BarChart3 className="size-5" />
        </div>
        <div>
          <h1 className="text-lg font-semibold">Workbench</h1>
          <p className="text-xs text-muted-foreground">{subtitle}</p>
        </div>
      </div>
      {children}
    </>
  );
  const card = 'w-full max-w-sm space-y-5 rounded-2xl border bg-card p-8 shadow-sm';
  return (
    <div className="flex min-h-dvh w-full items-center justify-center bg-sidebar p-4">
      {onSubmit ? (
        <form
          className={card}
          onSubmit={(e) => {
            e.preventDefault();
            onSubmit();
          }}
        >
          {inner}
        </form>
      ) : (
        <div className={card}>{inner}</div>
      )}
    </div>
  );
}
