// Package deploy holds no code: its directory holds the container and
// cluster manifests of dpbandit (kubernetes/: the decision service as a
// Deployment of replicas, sweeps and reproductions as Indexed Jobs with a
// merge Job; slurm/: the sweep as a job array with a dependent merge), and
// its tests check them: every manifest and script parses, every dpbandit
// command line in them is accepted by the CLI's parser (cli.Parse), the
// shard arithmetic matches the Job's completions and the array's size, and
// the Indexed Job's shard commands run locally as separate processes and
// merge to the bytes of a single run. See deploy/README.md.
package deploy
