package wire

// The environment variables through which gofault tells the processes it
// starts where to report and what they are; defined here once, for the
// agent, the cluster runner and workloads alike.
const (
	// EnvController is the controller's address, "unix:/path" or
	// "tcp:host:port". Empty or absent: the agent stays off (the program
	// runs as built without gofault) and a workload writes its events to
	// stdout as JSON lines.
	EnvController = "GOFAULT_CONTROLLER"
	// EnvNode is a node's name ("n1"), set for every node.
	EnvNode = "GOFAULT_NODE"
	// EnvTrial is the trial ID, set for nodes and workloads and echoed in
	// their Hello.
	EnvTrial = "GOFAULT_TRIAL"
	// EnvNodes is the JSON array of the cluster's nodes, for workloads.
	EnvNodes = "GOFAULT_NODES"
	// EnvDeadline is the RFC 3339 (nano) time by which a workload must
	// have finished.
	EnvDeadline = "GOFAULT_DEADLINE"
	// EnvSeed is a decimal int64 that makes a workload's choices
	// deterministic.
	EnvSeed = "GOFAULT_SEED"
	// EnvCluster is a random token, one per cluster gofault starts, set
	// for its nodes and so inherited by whatever they start: the cluster
	// runner finds and kills by it the processes a node left behind in a
	// session of their own.
	EnvCluster = "GOFAULT_CLUSTER"
	// EnvPowerLoss is a node's data dir, set when the campaign may inject
	// power-loss crashes: the agent keeps a durable image of the dir
	// (agent/durable) that the runner rolls the dir back to before a
	// restart.
	EnvPowerLoss = "GOFAULT_POWERLOSS"
	// EnvSyncSites lists, comma-separated, the indices of the fault sites
	// that sync a file or directory (fsync, fdatasync); the agent records
	// the durable image just before each runs.
	EnvSyncSites = "GOFAULT_SYNC_SITES"
)
