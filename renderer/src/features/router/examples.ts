/** Ready-made lines and setup steps for the router's URL (full right after GET/rotate, else masked). */

const SAMPLE = '{"action":"opened","repository":{"full_name":"octo/repo"},"sender":{"login":"octocat"}}';

export function curlExamples(url: string): { label: string; value: string }[] {
  return [
    {
      label: 'Send a JSON event (path /github)',
      value: `curl -X POST ${url}/github -H 'Content-Type: application/json' -d '${SAMPLE}'`,
    },
    {
      label: 'With a header a rule can read as {{headers.x-github-event}}',
      value: `curl -X POST ${url}/github -H 'Content-Type: application/json' -H 'X-GitHub-Event: issues' -d '${SAMPLE}'`,
    },
    {
      label: 'A form body and a query parameter ({{query.source}})',
      value: `curl -X POST '${url}/deploy?source=ci' -d 'service=api' -d 'status=done'`,
    },
  ];
}

/** Where each service wants the URL. The path after the token is free: it tells the services apart. */
export function serviceSetups(url: string): { service: string; where: string; url: string; tip: string }[] {
  return [
    {
      service: 'GitHub',
      where: 'Repository (or organization) → Settings → Webhooks → Add webhook → Payload URL',
      url: `${url}/github`,
      tip: 'Content type application/json. The event name comes as the header X-GitHub-Event.',
    },
    {
      service: 'GitLab',
      where: 'Project → Settings → Webhooks → Add new webhook → URL',
      url: `${url}/gitlab`,
      tip: 'Leave the secret token empty or keep it: the token in the URL is the key. The body’s object_kind names the event.',
    },
    {
      service: 'Stripe',
      where: 'Dashboard → Developers → Webhooks → Add endpoint → Endpoint URL',
      url: `${url}/stripe`,
      tip: 'The body’s type (invoice.paid, charge.failed, …) names the event: match on $.type.',
    },
    {
      service: 'Docker Hub',
      where: 'Repository → Webhooks → New webhook → Webhook URL',
      url: `${url}/dockerhub`,
      tip: 'Sent on every push of an image; {{push_data.tag}} and {{repository.repo_name}} read it.',
    },
  ];
}
