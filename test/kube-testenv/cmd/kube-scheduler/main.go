// Mirrors upstream cmd/kube-scheduler/scheduler.go: places the pods of the tests' workloads on
// the simulated (kwok) nodes.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() { os.Exit(cli.Run(app.NewSchedulerCommand())) }
