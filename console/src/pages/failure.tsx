import { ApiError, Unreachable } from '../api';

/** An error, said plainly. */
export function Failure({ error }: { error: Error }) {
  const text =
    error instanceof ApiError
      ? `${error.message} (${error.code})`
      : error instanceof Unreachable
        ? 'The server does not answer. Try again in a moment.'
        : error.message;
  return (
    <p class="error" role="alert">
      {text}
    </p>
  );
}
