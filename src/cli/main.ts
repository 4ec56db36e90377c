/** The `janus` command line. */
const [command] = process.argv.slice(2);

if (command === 'demo') {
  console.error('janus demo: not yet available (the demo lands with the CLI issue)');
  process.exitCode = 2;
} else {
  console.error(
    'usage: janus <command>\n\ncommands:\n  demo   try Janus on a local control plane and Git repository (not yet available)',
  );
  process.exitCode = command === undefined || command === '--help' || command === '-h' ? 0 : 2;
}
