/**
 * How agents' programs run on this machine: each run in an operating-system sandbox of its
 * own, or as the person's own user, said plainly with the reason there is none.
 */
export function SandboxSection({ sandbox }: { sandbox: { isolation: 'sandbox' | 'none'; detail: string } }) {
  return (
    <section className="stack card" aria-labelledby="sandbox-heading">
      <h2 id="sandbox-heading">Sandbox</h2>
      {sandbox.isolation === 'sandbox' ? (
        <p>Agents run in an operating-system sandbox. {sandbox.detail}</p>
      ) : (
        <p className="notice" role="note">
          No sandbox: agents run as your user and can read and change what you can. {sandbox.detail}
        </p>
      )}
    </section>
  );
}
