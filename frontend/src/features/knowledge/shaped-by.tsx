import { BookOpen, ChevronDown, ChevronRight } from 'lucide-react';
import { Fragment, useState } from 'react';
import { Link } from 'react-router';
import { itemHref, shapedBy } from './knowledge';
import type { RunKnowledge } from './types';

/**
 * "Shaped by: Active customer · Revenue excludes refunds" under an answer: the team's items its
 * code or answer used, each linking to the item; the items it was given but did not use fold
 * under a quieter "Also given".
 */
export function ShapedBy({ projectId, knowledge }: { projectId: string; knowledge: RunKnowledge[] }) {
  const { used, unused } = shapedBy(knowledge);
  const [open, setOpen] = useState(false);
  if (!used.length && !unused.length) return null;
  const link = (k: RunKnowledge, quiet = false) => (
    <Link
      to={itemHref(projectId, k.item_id)}
      className={quiet ? 'underline-offset-4 hover:text-foreground hover:underline' : 'font-medium text-foreground underline-offset-4 hover:underline'}
      data-testid={quiet ? 'also-given-item' : 'shaped-by-item'}
    >
      {k.title}
    </Link>
  );
  return (
    <div className="space-y-1 text-xs text-muted-foreground" data-testid="shaped-by">
      <p className="flex flex-wrap items-center gap-x-1.5 gap-y-0.5">
        <BookOpen className="size-3.5 shrink-0" />
        {used.length > 0 ? (
          <>
            <span>Shaped by:</span>
            {used.map((k, i) => (
              <Fragment key={k.item_id}>
                {i > 0 && <span aria-hidden>·</span>}
                {link(k)}
              </Fragment>
            ))}
          </>
        ) : (
          <span>Given the team’s knowledge; none of it shaped this answer.</span>
        )}
        {unused.length > 0 && (
          <button
            type="button"
            className="ml-1 inline-flex cursor-pointer items-center gap-0.5 hover:text-foreground"
            aria-expanded={open}
            onClick={() => setOpen(!open)}
            title={unused.map((k) => k.title).join(' · ')}
          >
            {open ? <ChevronDown className="size-3" /> : <ChevronRight className="size-3" />} {used.length ? 'Also given' : 'Given'} ({unused.length})
          </button>
        )}
      </p>
      {open && (
        <p className="flex flex-wrap gap-x-1.5 pl-5" data-testid="also-given">
          {unused.map((k, i) => (
            <Fragment key={k.item_id}>
              {i > 0 && <span aria-hidden>·</span>}
              {link(k, true)}
            </Fragment>
          ))}
        </p>
      )}
    </div>
  );
}
