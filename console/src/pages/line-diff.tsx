import { diffLines } from 'diff';

/** Two texts line by line (jsdiff): removed lines, then added ones, with the unchanged around. */
export function LineDiff(props: {
  before: string;
  after: string;
  beforeLabel: string;
  afterLabel: string;
}) {
  const parts = diffLines(props.before, props.after);
  const changed = parts.some((part) => part.added || part.removed);
  return (
    <figure class="diff">
      <figcaption>
        <span class="label-removed">− {props.beforeLabel}</span>{' '}
        <span class="label-added">+ {props.afterLabel}</span>
      </figcaption>
      {changed ? (
        <pre>
          {parts.map((part, i) => (
            <span key={i} class={part.added ? 'added' : part.removed ? 'removed' : 'same'}>
              {part.value
                .replace(/\n$/, '')
                .split('\n')
                .map((line) => `${part.added ? '+ ' : part.removed ? '- ' : '  '}${line}\n`)
                .join('')}
            </span>
          ))}
        </pre>
      ) : (
        <p>No difference in the body.</p>
      )}
    </figure>
  );
}
