package main

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/spf13/cobra"
)

// The template's outputs of static egress (template.yaml, Outputs; the
// StaticEgress parameter): the NAT gateways' Elastic IPs, comma-separated,
// when the stack created the VPC (create-vpc), and the deliver function's
// subnets, comma-separated, whenever it runs in a VPC.
const (
	outputEgressAddresses = "EgressIpAddresses"
	outputEgressSubnets   = "EgressSubnetIds"
)

// defaultRoute is the destination of a subnet's route to the internet.
const defaultRoute = "0.0.0.0/0"

// egressEC2 is the part of the EC2 API `herald egress` calls to find the
// NAT gateways of existing subnets.
type egressEC2 interface {
	DescribeSubnets(ctx context.Context, in *ec2.DescribeSubnetsInput, optFns ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error)
	DescribeRouteTables(ctx context.Context, in *ec2.DescribeRouteTablesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeRouteTablesOutput, error)
	DescribeNatGateways(ctx context.Context, in *ec2.DescribeNatGatewaysInput, optFns ...func(*ec2.Options)) (*ec2.DescribeNatGatewaysOutput, error)
}

var _ egressEC2 = (*ec2.Client)(nil)

// egressAddress is one public address the deliver function's traffic
// leaves from.
type egressAddress struct {
	IP string `json:"ip"`
	// NatGateway and Subnets are known when the address was found through
	// EC2 (existing subnets): the NAT gateway holding it and the function's
	// subnets whose default route leads there.
	NatGateway string   `json:"nat_gateway,omitempty"`
	Subnets    []string `json:"subnets,omitempty"`
}

// egressReport is what `herald egress` prints.
type egressReport struct {
	Stack     string          `json:"stack"`
	Subnets   []string        `json:"subnets"`
	Addresses []egressAddress `json:"addresses"`
	// Source is "outputs" (the stack's EgressIpAddresses output) or "ec2"
	// (the subnets' route tables and NAT gateways).
	Source string `json:"source"`
}

func newEgressCmd(e *env, g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "egress",
		Short: "Print the public IP addresses the deliver function's traffic leaves from (static egress)",
		Long: `Print the public IPv4 addresses webhooks and chat posts of a stack deployed
with static egress leave from: what a receiver allows (docs/security.md).

StaticEgress create-vpc: the stack's EgressIpAddresses output (the NAT
gateways' Elastic IPs). StaticEgress existing-subnets: the NAT gateways the
route tables of the stack's EgressSubnetIds send 0.0.0.0/0 to, and their
public addresses; a subnet whose default route does not lead to a NAT
gateway is an error (a function there cannot reach the internet).

A stack without static egress (StaticEgress none) has no fixed address:
Lambda's own addresses change. That is an error here.

IAM: cloudformation:DescribeStacks; for existing subnets also
ec2:DescribeSubnets, ec2:DescribeRouteTables and ec2:DescribeNatGateways.`,
		Example: `  herald egress --stack herald
  herald egress --stack herald --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if g.stack == "" {
				return usagef("herald egress needs --stack NAME")
			}
			outputs, err := g.stackOutputs(ctx)
			if err != nil {
				return err
			}
			report, err := resolveEgress(ctx, g.stack, outputs, func() (egressEC2, error) {
				cfg, err := g.awsConfig(ctx)
				if err != nil {
					return nil, err
				}
				return ec2.NewFromConfig(cfg), nil
			})
			if err != nil {
				return err
			}
			return writeEgress(e, g, report)
		},
	}
}

// resolveEgress finds the addresses of stack from its outputs: the
// EgressIpAddresses output when it has one, else the NAT gateways of its
// EgressSubnetIds through EC2 (api is called only then). A stack with
// neither output has no static egress: an error that says how to get it.
func resolveEgress(ctx context.Context, stack string, outputs map[string]string, api func() (egressEC2, error)) (egressReport, error) {
	r := egressReport{Stack: stack, Subnets: splitList(outputs[outputEgressSubnets])}
	if ips := splitList(outputs[outputEgressAddresses]); len(ips) > 0 {
		r.Source = "outputs"
		for _, ip := range ips {
			if _, err := netip.ParseAddr(ip); err != nil {
				return r, fmt.Errorf("stack %s: output %s holds %q, not an IP address", stack, outputEgressAddresses, ip)
			}
			r.Addresses = append(r.Addresses, egressAddress{IP: ip})
		}
		return r, nil
	}
	if len(r.Subnets) == 0 {
		return r, fmt.Errorf("stack %s has no static egress (no %s / %s outputs): its deliver function leaves from Lambda's shared addresses, which change; deploy it with StaticEgress create-vpc or existing-subnets (docs/deploy.md#static-egress)",
			stack, outputEgressAddresses, outputEgressSubnets)
	}
	client, err := api()
	if err != nil {
		return r, err
	}
	r.Source = "ec2"
	r.Addresses, err = natAddresses(ctx, client, r.Subnets)
	if err != nil {
		return r, fmt.Errorf("stack %s: %w", stack, err)
	}
	return r, nil
}

// natAddresses follows each subnet's default route (0.0.0.0/0; its route
// table is the one associated with it, else its VPC's main route table) to
// a NAT gateway and returns the gateways' public addresses, sorted by
// address. A subnet whose default route leads elsewhere, or nowhere, is an
// error naming it.
func natAddresses(ctx context.Context, api egressEC2, subnets []string) ([]egressAddress, error) {
	natOf := map[string]string{} // subnet → NAT gateway
	for _, subnet := range subnets {
		table, err := routeTableOf(ctx, api, subnet)
		if err != nil {
			return nil, err
		}
		target := ""
		for _, rt := range table.Routes {
			if aws.ToString(rt.DestinationCidrBlock) != defaultRoute {
				continue
			}
			switch {
			case rt.NatGatewayId != nil:
				natOf[subnet] = aws.ToString(rt.NatGatewayId)
			case rt.GatewayId != nil:
				target = aws.ToString(rt.GatewayId)
			default:
				target = "a target that is not a NAT gateway"
			}
		}
		if natOf[subnet] != "" {
			continue
		}
		if target == "" {
			return nil, fmt.Errorf("subnet %s (route table %s) has no %s route: a function there cannot reach the internet", subnet, aws.ToString(table.RouteTableId), defaultRoute)
		}
		return nil, fmt.Errorf("subnet %s (route table %s) sends %s to %s, not to a NAT gateway: a Lambda function there gets no public address and cannot reach the internet", subnet, aws.ToString(table.RouteTableId), defaultRoute, target)
	}
	var nats []string
	for _, n := range natOf {
		if !slices.Contains(nats, n) {
			nats = append(nats, n)
		}
	}
	slices.Sort(nats)
	out, err := api.DescribeNatGateways(ctx, &ec2.DescribeNatGatewaysInput{NatGatewayIds: nats})
	if err != nil {
		return nil, fmt.Errorf("describe NAT gateways %s: %w", strings.Join(nats, ", "), err)
	}
	var addrs []egressAddress
	for _, n := range out.NatGateways {
		id := aws.ToString(n.NatGatewayId)
		var of []string
		for _, s := range subnets {
			if natOf[s] == id {
				of = append(of, s)
			}
		}
		if n.State != ec2types.NatGatewayStateAvailable {
			return nil, fmt.Errorf("NAT gateway %s of subnets %s is %s, not available", id, strings.Join(of, ", "), n.State)
		}
		for _, a := range n.NatGatewayAddresses {
			if ip := aws.ToString(a.PublicIp); ip != "" {
				addrs = append(addrs, egressAddress{IP: ip, NatGateway: id, Subnets: of})
			}
		}
	}
	for _, n := range nats {
		if !slices.ContainsFunc(addrs, func(a egressAddress) bool { return a.NatGateway == n }) {
			return nil, fmt.Errorf("NAT gateway %s has no public address (a private NAT gateway?): receivers see no fixed address", n)
		}
	}
	slices.SortFunc(addrs, func(a, b egressAddress) int {
		return netip.MustParseAddr(a.IP).Compare(netip.MustParseAddr(b.IP))
	})
	return addrs, nil
}

// routeTableOf returns the route table of subnet: the one associated with
// it, else the main route table of its VPC (EC2: a subnet without an
// explicit association uses the main route table).
func routeTableOf(ctx context.Context, api egressEC2, subnet string) (ec2types.RouteTable, error) {
	out, err := api.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{
		Filters: []ec2types.Filter{{Name: aws.String("association.subnet-id"), Values: []string{subnet}}},
	})
	if err != nil {
		return ec2types.RouteTable{}, fmt.Errorf("route table of subnet %s: %w", subnet, err)
	}
	if len(out.RouteTables) > 0 {
		return out.RouteTables[0], nil
	}
	subnets, err := api.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{subnet}})
	if err != nil {
		return ec2types.RouteTable{}, fmt.Errorf("subnet %s: %w", subnet, err)
	}
	if len(subnets.Subnets) == 0 {
		return ec2types.RouteTable{}, fmt.Errorf("subnet %s: not found", subnet)
	}
	vpc := aws.ToString(subnets.Subnets[0].VpcId)
	out, err = api.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{
		Filters: []ec2types.Filter{
			{Name: aws.String("vpc-id"), Values: []string{vpc}},
			{Name: aws.String("association.main"), Values: []string{"true"}},
		},
	})
	if err != nil {
		return ec2types.RouteTable{}, fmt.Errorf("main route table of VPC %s: %w", vpc, err)
	}
	if len(out.RouteTables) == 0 {
		return ec2types.RouteTable{}, fmt.Errorf("subnet %s: VPC %s has no main route table", subnet, vpc)
	}
	return out.RouteTables[0], nil
}

// splitList splits a comma-separated output, dropping empty items and
// spaces.
func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func writeEgress(e *env, g *globals, r egressReport) error {
	if g.json {
		return writeJSON(e.stdout, r)
	}
	fmt.Fprintf(e.stdout, "Stack %s: the deliver function's traffic leaves from %d address(es) (subnets %s):\n", r.Stack, len(r.Addresses), strings.Join(r.Subnets, ", "))
	rows := make([][]string, len(r.Addresses))
	for i, a := range r.Addresses {
		rows[i] = []string{a.IP, a.NatGateway, strings.Join(a.Subnets, ",")}
	}
	return table(e.stdout, []string{"ADDRESS", "NAT GATEWAY", "SUBNETS"}, rows)
}
