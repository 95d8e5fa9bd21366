package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/awstest"
)

// ec2Network is what ec2Wire knows: subnets, route tables, NAT gateways.
type ec2Network struct {
	subnets map[string]string // subnet → VPC
	tables  []ec2Table
	nats    []ec2Nat
}

type ec2Table struct {
	id, vpc string
	main    bool
	subnets []string          // explicitly associated
	routes  map[string]string // destination → target (nat-…, igw-…, local)
}

type ec2Nat struct {
	id, state string
	ips       []string
}

// ec2Wire answers DescribeSubnets, DescribeRouteTables (filters
// association.subnet-id, vpc-id, association.main) and DescribeNatGateways
// in EC2's query protocol (form-encoded requests, XML responses of the
// 2016-11-15 API, errors as <Response><Errors>), from net. It records the
// actions called.
func ec2Wire(t *testing.T, net ec2Network) (*ec2.Client, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var calls []string
	fail := func(w http.ResponseWriter, code, msg string) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>r</RequestID></Response>`, code, msg)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		action := r.Form.Get("Action")
		mu.Lock()
		calls = append(calls, action)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
		var b strings.Builder
		switch action {
		case "DescribeSubnets":
			for i := 1; r.Form.Has(fmt.Sprintf("SubnetId.%d", i)); i++ {
				id := r.Form.Get(fmt.Sprintf("SubnetId.%d", i))
				vpc, ok := net.subnets[id]
				if !ok {
					fail(w, "InvalidSubnetID.NotFound", fmt.Sprintf("The subnet ID '%s' does not exist", id))
					return
				}
				fmt.Fprintf(&b, "<item><subnetId>%s</subnetId><vpcId>%s</vpcId></item>", id, vpc)
			}
			fmt.Fprintf(w, `<DescribeSubnetsResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r</requestId><subnetSet>%s</subnetSet></DescribeSubnetsResponse>`, b.String())
		case "DescribeRouteTables":
			filters := map[string]string{}
			for i := 1; r.Form.Has(fmt.Sprintf("Filter.%d.Name", i)); i++ {
				filters[r.Form.Get(fmt.Sprintf("Filter.%d.Name", i))] = r.Form.Get(fmt.Sprintf("Filter.%d.Value.1", i))
			}
			for _, tb := range net.tables {
				if s, ok := filters["association.subnet-id"]; ok && !slices.Contains(tb.subnets, s) {
					continue
				}
				if v, ok := filters["vpc-id"]; ok && tb.vpc != v {
					continue
				}
				if m, ok := filters["association.main"]; ok && (m == "true") != tb.main {
					continue
				}
				fmt.Fprintf(&b, "<item><routeTableId>%s</routeTableId><vpcId>%s</vpcId><routeSet>", tb.id, tb.vpc)
				for dst, target := range tb.routes {
					fmt.Fprintf(&b, "<item><destinationCidrBlock>%s</destinationCidrBlock>", dst)
					if strings.HasPrefix(target, "nat-") {
						fmt.Fprintf(&b, "<natGatewayId>%s</natGatewayId>", target)
					} else {
						fmt.Fprintf(&b, "<gatewayId>%s</gatewayId>", target)
					}
					b.WriteString("<state>active</state></item>")
				}
				b.WriteString("</routeSet><associationSet>")
				if tb.main {
					b.WriteString("<item><main>true</main></item>")
				}
				for _, s := range tb.subnets {
					fmt.Fprintf(&b, "<item><main>false</main><subnetId>%s</subnetId></item>", s)
				}
				b.WriteString("</associationSet></item>")
			}
			fmt.Fprintf(w, `<DescribeRouteTablesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r</requestId><routeTableSet>%s</routeTableSet></DescribeRouteTablesResponse>`, b.String())
		case "DescribeNatGateways":
			for i := 1; r.Form.Has(fmt.Sprintf("NatGatewayId.%d", i)); i++ {
				id := r.Form.Get(fmt.Sprintf("NatGatewayId.%d", i))
				j := slices.IndexFunc(net.nats, func(n ec2Nat) bool { return n.id == id })
				if j < 0 {
					fail(w, "NatGatewayNotFound", fmt.Sprintf("The Nat Gateway %s was not found", id))
					return
				}
				n := net.nats[j]
				fmt.Fprintf(&b, "<item><natGatewayId>%s</natGatewayId><state>%s</state><natGatewayAddressSet>", n.id, n.state)
				for _, ip := range n.ips {
					fmt.Fprintf(&b, "<item><publicIp>%s</publicIp><privateIp>10.192.0.9</privateIp></item>", ip)
				}
				b.WriteString("</natGatewayAddressSet></item>")
			}
			fmt.Fprintf(w, `<DescribeNatGatewaysResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r</requestId><natGatewaySet>%s</natGatewaySet></DescribeNatGatewaysResponse>`, b.String())
		default:
			fail(w, "InvalidAction", "The action "+action+" is not valid for this web service.")
		}
	}))
	t.Cleanup(srv.Close)
	return ec2.NewFromConfig(awstest.Config(srv.URL)), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(calls)
	}
}

// twoZones is a VPC of two private subnets, each with its own route table
// to its own NAT gateway (the second holding a secondary address), and a
// third subnet left on the main route table, whose default route goes to
// the first NAT gateway.
func twoZones() ec2Network {
	return ec2Network{
		subnets: map[string]string{"subnet-0aaa1111": "vpc-1", "subnet-0bbb2222": "vpc-1", "subnet-0ccc3333": "vpc-1", "subnet-0ddd4444": "vpc-1"},
		tables: []ec2Table{
			{id: "rtb-main", vpc: "vpc-1", main: true, routes: map[string]string{"10.0.0.0/16": "local", "0.0.0.0/0": "nat-0a"}},
			{id: "rtb-a", vpc: "vpc-1", subnets: []string{"subnet-0aaa1111"}, routes: map[string]string{"10.0.0.0/16": "local", "0.0.0.0/0": "nat-0a"}},
			{id: "rtb-b", vpc: "vpc-1", subnets: []string{"subnet-0bbb2222"}, routes: map[string]string{"10.0.0.0/16": "local", "0.0.0.0/0": "nat-0b"}},
			{id: "rtb-public", vpc: "vpc-1", subnets: []string{"subnet-0ddd4444"}, routes: map[string]string{"10.0.0.0/16": "local", "0.0.0.0/0": "igw-0e"}},
		},
		nats: []ec2Nat{
			{id: "nat-0a", state: "available", ips: []string{"54.10.20.30"}},
			{id: "nat-0b", state: "available", ips: []string{"3.80.1.2", "52.1.2.3"}},
			{id: "nat-0p", state: "pending", ips: []string{"18.1.1.1"}},
		},
	}
}

// TestEgressFromOutputs: a stack that created its VPC publishes the
// addresses; herald egress reads them from DescribeStacks and calls no
// EC2 API.
func TestEgressFromOutputs(t *testing.T) {
	t.Parallel()
	cfn := cfnWire(t, "herald", map[string]string{
		outputEgressAddresses: "54.10.20.30,3.80.1.2", outputEgressSubnets: "subnet-0aaa1111,subnet-0bbb2222", "EmailQueueUrl": "https://sqs/q",
	})
	outputs, err := describeOutputs(context.Background(), cfn, "herald")
	require.NoError(t, err)
	r, err := resolveEgress(context.Background(), "herald", outputs, func() (egressEC2, error) {
		t.Fatal("EC2 called for a stack whose outputs name the addresses")
		return nil, nil
	})
	require.NoError(t, err)
	require.Equal(t, egressReport{
		Stack: "herald", Subnets: []string{"subnet-0aaa1111", "subnet-0bbb2222"}, Source: "outputs",
		Addresses: []egressAddress{{IP: "54.10.20.30"}, {IP: "3.80.1.2"}},
	}, r)

	var out bytes.Buffer
	require.NoError(t, writeEgress(&env{stdout: &out}, &globals{}, r))
	require.Equal(t, "Stack herald: the deliver function's traffic leaves from 2 address(es) (subnets subnet-0aaa1111, subnet-0bbb2222):\n"+
		"ADDRESS      NAT GATEWAY  SUBNETS\n"+
		"54.10.20.30  -            -\n"+
		"3.80.1.2     -            -\n", out.String())

	// One zone: one address.
	r1, err := resolveEgress(context.Background(), "herald", map[string]string{outputEgressAddresses: "54.10.20.30", outputEgressSubnets: "subnet-0aaa1111"},
		func() (egressEC2, error) { t.Fatal("EC2 called"); return nil, nil })
	require.NoError(t, err)
	require.Equal(t, []egressAddress{{IP: "54.10.20.30"}}, r1.Addresses)

	out.Reset()
	require.NoError(t, writeEgress(&env{stdout: &out}, &globals{json: true}, r))
	var back egressReport
	require.NoError(t, json.Unmarshal(out.Bytes(), &back))
	require.Equal(t, r, back)
}

// TestEgressFromExistingSubnets: for existing subnets, each subnet's route
// table (its own, else its VPC's main one) leads to a NAT gateway; every
// public address of those gateways is listed once, sorted, with the
// subnets behind it.
func TestEgressFromExistingSubnets(t *testing.T) {
	t.Parallel()
	client, calls := ec2Wire(t, twoZones())
	r, err := resolveEgress(context.Background(), "herald", map[string]string{outputEgressSubnets: "subnet-0aaa1111, subnet-0bbb2222,subnet-0ccc3333"},
		func() (egressEC2, error) { return client, nil })
	require.NoError(t, err)
	require.Equal(t, "ec2", r.Source)
	require.Equal(t, []egressAddress{
		{IP: "3.80.1.2", NatGateway: "nat-0b", Subnets: []string{"subnet-0bbb2222"}},
		{IP: "52.1.2.3", NatGateway: "nat-0b", Subnets: []string{"subnet-0bbb2222"}},
		{IP: "54.10.20.30", NatGateway: "nat-0a", Subnets: []string{"subnet-0aaa1111", "subnet-0ccc3333"}},
	}, r.Addresses)
	require.Equal(t, []string{
		"DescribeRouteTables", "DescribeRouteTables", // a, b: their own tables
		"DescribeRouteTables", "DescribeSubnets", "DescribeRouteTables", // c: none of its own, then its VPC's main table
		"DescribeNatGateways",
	}, calls())
}

// TestEgressErrors: what cannot give a fixed address is an error that
// names the subnet, the route's target or the gateway.
func TestEgressErrors(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		outputs map[string]string
		net     func(*ec2Network)
		want    []string
	}{
		"no static egress": {outputs: map[string]string{"EmailQueueUrl": "https://sqs/q"}, want: []string{"stack herald has no static egress", "StaticEgress create-vpc or existing-subnets"}},
		"empty outputs":    {outputs: map[string]string{outputEgressAddresses: " , ", outputEgressSubnets: ""}, want: []string{"no static egress"}},
		"output not an IP": {outputs: map[string]string{outputEgressAddresses: "54.10.20.30,eipalloc-1"}, want: []string{`output EgressIpAddresses holds "eipalloc-1"`}},
		"public subnet":    {outputs: map[string]string{outputEgressSubnets: "subnet-0aaa1111,subnet-0ddd4444"}, want: []string{"subnet subnet-0ddd4444 (route table rtb-public) sends 0.0.0.0/0 to igw-0e, not to a NAT gateway"}},
		"no default route": {
			outputs: map[string]string{outputEgressSubnets: "subnet-0aaa1111"},
			net:     func(n *ec2Network) { delete(n.tables[1].routes, "0.0.0.0/0") },
			want:    []string{"subnet subnet-0aaa1111 (route table rtb-a) has no 0.0.0.0/0 route"},
		},
		"NAT gateway pending": {
			outputs: map[string]string{outputEgressSubnets: "subnet-0bbb2222"},
			net:     func(n *ec2Network) { n.tables[2].routes["0.0.0.0/0"] = "nat-0p" },
			want:    []string{"NAT gateway nat-0p of subnets subnet-0bbb2222 is pending, not available"},
		},
		"NAT gateway without a public address": {
			outputs: map[string]string{outputEgressSubnets: "subnet-0aaa1111"},
			net:     func(n *ec2Network) { n.nats[0].ips = nil },
			want:    []string{"NAT gateway nat-0a has no public address"},
		},
		"unknown subnet": {outputs: map[string]string{outputEgressSubnets: "subnet-0fff9999"}, want: []string{"subnet subnet-0fff9999", "InvalidSubnetID.NotFound"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			net := twoZones()
			if tc.net != nil {
				tc.net(&net)
			}
			client, _ := ec2Wire(t, net)
			_, err := resolveEgress(context.Background(), "herald", tc.outputs, func() (egressEC2, error) { return client, nil })
			require.Error(t, err)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestEgressNeedsStack: without --stack there is nothing to read: a
// usage error.
func TestEgressNeedsStack(t *testing.T) {
	t.Parallel()
	r := herald(t, "", "egress")
	require.Equal(t, exitUsage, r.code, "%+v", r)
	require.Contains(t, r.stderr, "herald egress needs --stack NAME")
	r = herald(t, "", "egress", "--help")
	require.Equal(t, exitOK, r.code)
	require.Contains(t, r.stdout, "EgressIpAddresses")
}
