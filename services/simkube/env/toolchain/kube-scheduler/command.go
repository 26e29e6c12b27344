package main

// The command line and start-up of upstream's kube-scheduler (cmd/kube-scheduler/app of
// k8s.io/kubernetes v1.36): the same options, flags, validation and Run, so a flag or
// configuration file means here what it means there. Only the scheduler's construction
// differs, by the clock its queue gets. Upstream's Setup builds the scheduler without a way
// to pass options of our own, which is why this file does those steps itself.

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/tools/events"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/cli/globalflag"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/featuregate"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/version/verflag"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	serverconfig "k8s.io/kubernetes/cmd/kube-scheduler/app/config"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"

	"simkube.local/toolchain/pacing"
)

// replay is what the environment variables said: the pace, and where its holds are published.
type replay struct {
	pace           *pacing.Pace
	holdsNamespace string
	holdsName      string // "" when the run does not hold its clock
}

func newCommand(r *replay) *cobra.Command {
	opts := options.NewOptions()
	cmd := &cobra.Command{
		Use:  "kube-scheduler",
		Long: "Kubernetes' scheduler, with its scheduling queue on a replay's clock (SIMKUBE_SPEED).",
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return opts.ComponentGlobalsRegistry.Set() // feature gates before RunE
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd, opts, r) },
		Args: cobra.NoArgs,
	}
	named := opts.Flags
	verflag.AddFlags(named.FlagSet("global"))
	globalflag.AddGlobalFlags(named.FlagSet("global"), cmd.Name(),
		logs.SkipLoggingConfigurationFlags())
	for _, set := range named.FlagSets {
		cmd.Flags().AddFlagSet(set)
	}
	cliflag.SetUsageAndHelpFunc(cmd, *named, 100)
	return cmd
}

func run(cmd *cobra.Command, opts *options.Options, r *replay) error {
	verflag.PrintAndExitIfRequested()
	gates := opts.ComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	if err := logsapi.ValidateAndApply(opts.Logs, gates); err != nil {
		return err
	}
	cliflag.PrintFlags(cmd.Flags())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-server.SetupSignalHandler()
		cancel()
	}()
	ctx = klog.NewContext(ctx, klog.Background())

	config, err := latest.Default() // the file, if any, is read over these defaults
	if err != nil {
		return err
	}
	opts.ComponentConfig = config
	if errs := opts.Validate(); len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	built, err := opts.Config(ctx)
	if err != nil {
		return err
	}
	cc := built.Complete()

	if r.pace.Speed != 1 {
		klog.FromContext(ctx).Info("the scheduling queue follows the replay's speed",
			"speed", r.pace.Speed, "holds", r.holdsNamespace+"/"+r.holdsName)
		if r.holdsName != "" {
			err := pacing.FollowHolds(ctx, cc.Client, r.holdsNamespace, r.holdsName, r.pace)
			if err != nil {
				return err
			}
		}
	}
	sched, profiles, err := build(ctx, &cc, r.pace)
	if err != nil {
		return err
	}
	if err := options.LogOrWriteConfig(klog.FromContext(ctx), opts.WriteConfigTo,
		&cc.ComponentConfig, profiles); err != nil {
		return err
	}
	if mutable, ok := gates.(featuregate.MutableFeatureGate); ok {
		mutable.AddMetrics()
	}
	opts.ComponentGlobalsRegistry.AddMetrics()
	return app.Run(ctx, &cc, sched)
}

// build makes the scheduler from the completed configuration with the queue on p's trace
// clock; it also returns the profiles as the framework completed them, for --write-config-to.
func build(ctx context.Context, cc *serverconfig.CompletedConfig,
	p *pacing.Pace) (*scheduler.Scheduler, []schedulerconfig.KubeSchedulerProfile, error) {
	component := cc.ComponentConfig
	var profiles []schedulerconfig.KubeSchedulerProfile
	sched, err := scheduler.New(ctx, cc.Client, cc.InformerFactory, cc.DynInformerFactory,
		func(name string) events.EventRecorderLogger { return cc.EventBroadcaster.NewRecorder(name) },
		scheduler.WithComponentConfigVersion(component.TypeMeta.APIVersion),
		scheduler.WithKubeConfig(cc.KubeConfig),
		scheduler.WithProfiles(component.Profiles...),
		scheduler.WithPercentageOfNodesToScore(component.PercentageOfNodesToScore),
		scheduler.WithPodMaxBackoffSeconds(component.PodMaxBackoffSeconds),
		scheduler.WithPodInitialBackoffSeconds(component.PodInitialBackoffSeconds),
		scheduler.WithPodMaxInUnschedulablePodsDuration(cc.PodMaxInUnschedulablePodsDuration),
		scheduler.WithExtenders(component.Extenders...),
		scheduler.WithParallelism(component.Parallelism),
		scheduler.WithBuildFrameworkCapturer(func(profile schedulerconfig.KubeSchedulerProfile) {
			profiles = append(profiles, profile)
		}),
		scheduler.WithClock(pacing.NewTraceClock(p)),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("building the scheduler: %w", err)
	}
	return sched, profiles, nil
}
